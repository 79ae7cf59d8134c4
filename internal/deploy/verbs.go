package deploy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/deploy/desired"
	"github.com/fabric-runtime/fabric/internal/deploy/document"
	"github.com/fabric-runtime/fabric/internal/supervisorproto"
)

// PlanResult is plan's output.
type PlanResult struct {
	// Complete is false when apply would refuse (Refused says why).
	Complete bool                     `json:"complete"`
	Changes  []supervisorproto.Change `json:"changes"`
	Refused  []*Error                 `json:"refused"`
	StateDir string                   `json:"state_dir"`
}

// ApplyResult is apply's output.
type ApplyResult struct {
	Outcome    string                   `json:"outcome"`
	Changes    []supervisorproto.Change `json:"changes"`
	Health     []ResourceHealth         `json:"health"`
	Recovery   []string                 `json:"recovery"`
	Connection Connection               `json:"connection"`
	Supervisor *SupervisorRecord        `json:"supervisor"`
	Retained   []string                 `json:"retained"`
	StateDir   string                   `json:"state_dir"`
}

// ResourceHealth is one resource's state after apply.
type ResourceHealth struct {
	Resource  string `json:"resource"`
	State     string `json:"state"`
	Health    string `json:"health,omitempty"`
	RuntimeID string `json:"runtime_id,omitempty"`
	Reason    string `json:"reason,omitempty"`
}

// Connection is how clients reach the deployment: the supervisor's
// control socket (fabric-agent-ctl --socket) and the services' endpoints.
type Connection struct {
	Socket    string            `json:"socket"`
	Endpoints map[string]string `json:"endpoints"`
}

// refusals are what makes apply refuse before it changes anything.
func refusals(l *loaded, in *Intent) []*Error {
	var out []*Error
	if in == nil {
		return out
	}
	if in.UID != "" && in.UID != l.doc.Deployment.Metadata.UID {
		out = append(out, &Error{Code: CodeUIDChanged, Message: fmt.Sprintf("%s belongs to deployment uid %s; the document says %s (metadata.uid is immutable: a new uid is a new deployment with its own state dir)", l.dir, in.UID, l.doc.Deployment.Metadata.UID)})
	}
	if in.Destroying {
		out = append(out, &Error{Code: CodeDestroyUnfinished, Message: "a destroy of this deployment did not finish: run fabric deploy destroy again"})
	}
	if in.Pending && in.PendingDigest != l.doc.Digest {
		out = append(out, &Error{Code: CodePendingOtherDigest, Message: fmt.Sprintf("an apply of another document (digest %s) did not finish: apply that document again, or destroy", short(in.PendingDigest))})
	}
	return out
}

func short(d string) string {
	if len(d) > 12 {
		return d[:12]
	}
	return d
}

// Plan observes only: it starts nothing and changes nothing.
func Plan(ctx context.Context, o Options) (*PlanResult, error) {
	l, in, _, err := open(&o, true, false)
	if err != nil {
		return nil, err
	}
	res := &PlanResult{Changes: []supervisorproto.Change{}, Refused: refusals(l, in), StateDir: l.dir}
	var st *supervisorproto.Status
	if answers(ctx, socketOf(l)) {
		st, _ = supervisorStatus(ctx, socketOf(l))
	}
	res.Changes = diff(l.state, st)
	res.Refused = append(res.Refused, takenPorts(l.state, st)...)
	res.Complete = len(res.Refused) == 0
	return res, nil
}

// diff compares the desired state with what the supervisor runs.
func diff(want *desired.State, st *supervisorproto.Status) []supervisorproto.Change {
	var out []supervisorproto.Change
	agents := map[string]supervisorproto.AgentStatus{}
	services := map[string]supervisorproto.ServiceStatus{}
	if st != nil {
		for _, a := range st.Agents {
			agents[a.Name] = a
		}
		for _, s := range st.Services {
			services[s.ID] = s
		}
	}
	for _, svc := range want.Services {
		cur, ok := services[svc.ID]
		delete(services, svc.ID)
		switch {
		case !ok:
			out = append(out, supervisorproto.Change{Resource: svc.ID, Action: supervisorproto.ActionCreate, Reason: "attached, not running"})
		case cur.Generation != svc.Generation:
			out = append(out, supervisorproto.Change{Resource: svc.ID, Action: supervisorproto.ActionReplace, Reason: "its definition changed"})
		case cur.State != supervisorproto.StateRunning:
			out = append(out, supervisorproto.Change{Resource: svc.ID, Action: supervisorproto.ActionReplace, Reason: "it is " + cur.State})
		default:
			out = append(out, supervisorproto.Change{Resource: svc.ID, Action: supervisorproto.ActionNoop, Reason: "unchanged and healthy"})
		}
	}
	for id := range services {
		out = append(out, supervisorproto.Change{Resource: id, Action: supervisorproto.ActionDelete, Reason: "no longer attached"})
	}
	for _, a := range want.Agents {
		r := "agent/" + a.Name
		cur, ok := agents[a.Name]
		delete(agents, a.Name)
		switch {
		case !ok:
			out = append(out, supervisorproto.Change{Resource: r, Action: supervisorproto.ActionCreate, Reason: "declared, not running"})
		case cur.Generation != a.Generation:
			out = append(out, supervisorproto.Change{Resource: r, Action: supervisorproto.ActionReplace, Reason: "its config or attachments changed: its in-memory conversation will be lost"})
		case cur.Revocation != nil:
			rv := cur.Revocation
			out = append(out, supervisorproto.Change{Resource: r, Action: supervisorproto.ActionNoop, Reason: fmt.Sprintf("%s: catalog serial %d revoked its package entry %s (running: %s); apply starts it only once its definition changes", cur.State, rv.CatalogSerial, rv.Entry, rv.Policy)})
		case cur.State != supervisorproto.StateRunning:
			out = append(out, supervisorproto.Change{Resource: r, Action: supervisorproto.ActionReplace, Reason: "it is " + cur.State})
		default:
			out = append(out, supervisorproto.Change{Resource: r, Action: supervisorproto.ActionNoop, Reason: "unchanged and running"})
		}
	}
	for name := range agents {
		out = append(out, supervisorproto.Change{Resource: "agent/" + name, Action: supervisorproto.ActionDelete, Reason: "no longer declared"})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Resource < out[j].Resource })
	return out
}

// takenPorts names each MCP service port held by a process that is not
// the deployment's own service process.
func takenPorts(want *desired.State, st *supervisorproto.Status) []*Error {
	var out []*Error
	ours := map[string]int{}
	if st != nil {
		for _, s := range st.Services {
			ours[s.ID] = s.Pid
		}
	}
	for _, svc := range want.Services {
		if svc.MCP == nil {
			continue
		}
		holders := portHolders(svc.MCP.Port)
		if len(holders) == 0 {
			continue
		}
		mine := ours[svc.ID]
		foreign := []string{}
		for _, h := range holders {
			if mine == 0 || !inGroup(h.pid, mine) {
				foreign = append(foreign, h.String())
			}
		}
		if len(foreign) > 0 {
			out = append(out, &Error{Code: CodeResourceTaken, Message: fmt.Sprintf("%s: port %d is held by %v, which this deployment does not own", svc.ID, svc.MCP.Port, foreign)})
		}
	}
	return out
}

// open loads the document (with its desired state when compute is set)
// and reads the intent record; with lock it first takes the state dir's
// lock, which the caller releases with unlock.
func open(o *Options, compute, lock bool) (_ *loaded, _ *Intent, unlock func(), _ error) {
	o.defaults()
	l, err := load(o, compute)
	if err != nil {
		return nil, nil, nil, err
	}
	unlock = func() {}
	if lock {
		if unlock, err = lockState(l.dir); err != nil {
			return nil, nil, nil, err
		}
	}
	in, err := readIntent(l.dir)
	if err != nil {
		unlock()
		return nil, nil, nil, err
	}
	return l, in, unlock, nil
}

// Apply reconciles the deployment, waits for readiness and returns; the
// agents and services keep running under the supervisor.
func Apply(ctx context.Context, o Options) (*ApplyResult, error) {
	l, in, unlock, err := open(&o, true, true)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if r := refusals(l, in); len(r) > 0 {
		return nil, r[0]
	}
	creds := map[string]string{}
	for _, c := range l.state.Credentials() {
		if c.Env != "" {
			v, ok := o.LookupEnv(c.Env)
			if !ok || v == "" {
				return nil, &Error{Code: CodeCredentialMissing, Message: fmt.Sprintf("credential {env: %s} is not set; apply hands its value to the supervisor, so it must be set for apply", c.Env)}
			}
			creds[desired.Key(c)] = v
		}
	}
	socket := socketOf(l)
	var st *supervisorproto.Status
	if answers(ctx, socket) {
		st, _ = supervisorStatus(ctx, socket)
	}
	if r := takenPorts(l.state, st); len(r) > 0 {
		return nil, r[0]
	}
	if in == nil {
		in = &Intent{Generations: map[string]string{}}
	}
	in.Name, in.UID = l.doc.Deployment.Metadata.Name, l.doc.Deployment.Metadata.UID
	in.Pending, in.PendingDigest, in.Destroyed = true, l.doc.Digest, false
	if err := writeIntent(l.dir, in); err != nil {
		return nil, err
	}
	sup := in.Supervisor
	switch l.doc.Deployment.Spec.Supervisor.Kind {
	case contract.SupervisorExternal:
		if !answers(ctx, socket) {
			return nil, &Error{Code: CodeSupervisorUnreachable, Message: fmt.Sprintf("no supervisor answers on %s (supervisor.kind external: the operator runs fabric serve there)", socket)}
		}
		sup = &SupervisorRecord{Kind: contract.SupervisorExternal, Socket: socket}
	default:
		switch {
		case st == nil:
			// Nothing answers: a recorded supervisor still alive is hung.
			if alive(sup) {
				_ = stopSupervisor(sup, 10*time.Second)
			}
			sup, err = startSupervisor(ctx, &o, l.dir, socket, l.doc.Credentials())
			if err != nil {
				return nil, err
			}
		case sup == nil || sup.Pid != st.Supervisor.Pid:
			// A supervisor this apply did not start answers on the state
			// dir's socket (one an operator started after a crash, say): it
			// owns the deployment now, and destroy stops it.
			sup = &SupervisorRecord{Kind: contract.SupervisorProcess, Socket: socket, Pid: st.Supervisor.Pid,
				StartTicks: startTicks(st.Supervisor.Pid), StartedAtMillis: st.Supervisor.StartedAtMillis}
		}
	}
	in.Supervisor = sup
	if err := writeIntent(l.dir, in); err != nil {
		return nil, err
	}
	var ar supervisorproto.ApplyResult
	if err := ask(ctx, socket, supervisorproto.ActionApply, supervisorproto.ApplyPayload{State: l.state, Credentials: creds}, o.Timeout, &ar, "the outcome is unknown: run apply again"); err != nil {
		return nil, err
	}
	in.Pending, in.PendingDigest, in.Digest = false, "", l.doc.Digest
	in.Generations = map[string]string{}
	for _, a := range l.state.Agents {
		in.Generations["agent/"+a.Name] = a.Generation
	}
	for _, s := range l.state.Services {
		in.Generations[s.ID] = s.Generation
	}
	if err := writeIntent(l.dir, in); err != nil {
		return nil, err
	}
	out := &ApplyResult{Outcome: ar.Outcome, Changes: ar.Changes, Recovery: ar.Recovery, Supervisor: sup, StateDir: l.dir,
		Connection: Connection{Socket: socket, Endpoints: map[string]string{}}, Health: []ResourceHealth{}, Retained: []string{}}
	for _, a := range ar.Status.Agents {
		h := ResourceHealth{Resource: "agent/" + a.Name, State: a.State, RuntimeID: a.RuntimeID, Reason: a.Reason}
		if a.Health != nil {
			h.Health = a.Health.Outcome
		}
		out.Health = append(out.Health, h)
	}
	for _, s := range ar.Status.Services {
		out.Health = append(out.Health, ResourceHealth{Resource: s.ID, State: s.State, Reason: s.Reason})
		if s.URL != "" {
			out.Connection.Endpoints[s.ID] = s.URL
		}
	}
	if ar.Status.Supervisor.ModelProxy != "" {
		out.Connection.Endpoints["model-proxy"] = ar.Status.Supervisor.ModelProxy
	}
	return out, nil
}

// StatusResult is status's output.
type StatusResult struct {
	Deployment string                   `json:"deployment"`
	UID        string                   `json:"uid"`
	StateDir   string                   `json:"state_dir"`
	Supervisor SupervisorState          `json:"supervisor"`
	Pending    bool                     `json:"pending"`
	Destroyed  bool                     `json:"destroyed"`
	Drift      []supervisorproto.Change `json:"drift"`
	Status     *supervisorproto.Status  `json:"status"`
}

// SupervisorState is whether the supervisor runs, and how to fix it.
type SupervisorState struct {
	State  string            `json:"state"` // running, not_running, never_started
	Detail string            `json:"detail,omitempty"`
	Record *SupervisorRecord `json:"record,omitempty"`
}

// Status reports the supervisor and every resource, with what drifted
// from the document.
func Status(ctx context.Context, o Options) (*StatusResult, error) {
	l, in, _, err := open(&o, true, false)
	if err != nil {
		return nil, err
	}
	res := &StatusResult{Deployment: l.doc.Deployment.Metadata.Name, UID: l.doc.Deployment.Metadata.UID, StateDir: l.dir, Drift: []supervisorproto.Change{}}
	socket := socketOf(l)
	if in != nil {
		res.Pending, res.Destroyed, res.Supervisor.Record = in.Pending, in.Destroyed, in.Supervisor
	}
	st, serr := supervisorStatus(ctx, socket)
	switch {
	case serr == nil:
		res.Supervisor.State, res.Status = "running", st
	case in == nil || in.Supervisor == nil:
		res.Supervisor.State, res.Supervisor.Detail = "never_started", "run fabric deploy apply"
	default:
		res.Supervisor.State = "not_running"
		res.Supervisor.Detail = fmt.Sprintf("the supervisor (pid %d) is gone (crashed, killed or the machine rebooted; it is not restarted on reboot): run fabric deploy apply to bring it and the agents back", in.Supervisor.Pid)
	}
	if in != nil && !in.Destroyed {
		for _, c := range diff(l.state, st) {
			if c.Action != supervisorproto.ActionNoop {
				res.Drift = append(res.Drift, c)
			}
		}
	}
	return res, nil
}

// Export prints the applied document with references only, in its
// authored scopes; it refuses while anything drifted.
func Export(ctx context.Context, o Options) ([]byte, error) {
	l, in, _, err := open(&o, true, false)
	if err != nil {
		return nil, err
	}
	switch {
	case in == nil || in.Digest == "" || in.Destroyed:
		return nil, &Error{Code: CodeNotApplied, Message: "this deployment has not been applied (or was destroyed): nothing to export"}
	case in.Pending || in.Destroying:
		return nil, &Error{Code: CodeDrifted, Message: "an apply or destroy is unfinished: finish it before exporting"}
	case in.Digest != l.doc.Digest:
		return nil, &Error{Code: CodeDrifted, Message: "the document changed since it was applied: apply it (or export the applied one)"}
	}
	st, serr := supervisorStatus(ctx, socketOf(l))
	if serr != nil {
		return nil, &Error{Code: CodeDrifted, Message: "the supervisor does not answer: run fabric deploy apply before exporting"}
	}
	for _, c := range diff(l.state, st) {
		if c.Action != supervisorproto.ActionNoop {
			return nil, &Error{Code: CodeDrifted, Message: fmt.Sprintf("%s drifted (%s: %s): apply to repair it, then export", c.Resource, c.Action, c.Reason)}
		}
	}
	return document.MarshalYAML(&l.doc.Deployment)
}

// DestroyResult is destroy's output.
type DestroyResult struct {
	Outcome  string   `json:"outcome"` // destroyed, or already_destroyed
	Removed  []string `json:"removed"`
	Retained []string `json:"retained"`
	StateDir string   `json:"state_dir"`
}

// Destroy removes what the deployment owns (agents, services, the
// supervisor it started) and reports what it kept. It is resumable.
func Destroy(ctx context.Context, o Options) (*DestroyResult, error) {
	l, in, unlock, err := open(&o, false, true)
	if err != nil {
		return nil, err
	}
	defer unlock()
	res := &DestroyResult{Removed: []string{}, Retained: []string{}, StateDir: l.dir}
	if in == nil || (in.Destroyed && !in.Destroying) {
		res.Outcome = "already_destroyed"
		if in != nil {
			res.Retained = in.Retained
		}
		return res, nil
	}
	if in.UID != "" && in.UID != l.doc.Deployment.Metadata.UID {
		return nil, &Error{Code: CodeUIDChanged, Message: fmt.Sprintf("%s belongs to deployment uid %s, not %s: destroy removes only what it owns", l.dir, in.UID, l.doc.Deployment.Metadata.UID)}
	}
	in.Destroying = true
	if err := writeIntent(l.dir, in); err != nil {
		return nil, err
	}
	socket := socketOf(l)
	if answers(ctx, socket) {
		resp, err := call(ctx, socket, supervisorproto.ActionDestroy, nil, 2*time.Minute)
		if err != nil {
			return nil, &Error{Code: CodeSupervisorUnreachable, Message: fmt.Sprintf("the supervisor did not answer the destroy: %v; run destroy again", err)}
		}
		var dr supervisorproto.DestroyResult
		_ = json.Unmarshal(resp.Output, &dr)
		if resp.Error != nil {
			return nil, &Error{Code: CodeSupervisorFailed, Message: resp.Error.Error() + "; run destroy again"}
		}
		res.Removed = append(res.Removed, dr.Removed...)
		res.Retained = append(res.Retained, dr.Retained...)
	}
	if sup := in.Supervisor; sup != nil && sup.Kind == contract.SupervisorProcess {
		if alive(sup) {
			if err := stopSupervisor(sup, 30*time.Second); err != nil {
				return nil, &Error{Code: CodeSupervisorFailed, Message: err.Error() + "; run destroy again"}
			}
			res.Removed = append(res.Removed, fmt.Sprintf("supervisor (pid %d)", sup.Pid))
		}
		for _, f := range []string{supervisorproto.SocketFile, supervisorproto.DesiredFile, supervisorproto.RevokedFile} {
			if err := os.Remove(filepath.Join(l.dir, f)); err == nil {
				res.Removed = append(res.Removed, f)
			}
		}
	}
	res.Retained = append(res.Retained, "state dir "+l.dir+" (intent.json records the destroy; logs)")
	in.Destroying, in.Destroyed, in.Pending, in.PendingDigest = false, true, false, ""
	in.Generations, in.Supervisor, in.Retained = map[string]string{}, nil, res.Retained
	if err := writeIntent(l.dir, in); err != nil {
		return nil, err
	}
	res.Outcome = "destroyed"
	return res, nil
}

// Init writes a document skeleton with a fresh uid to path (refusing to
// overwrite one).
func Init(name, path string) error {
	b, err := document.Init(name)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if errors.Is(err, os.ErrExist) {
		return &Error{Code: CodeDocumentExists, Message: path + " exists; init never overwrites a document"}
	}
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// AccessRequest is one key operation on an access gateway of the
// deployment (fabric deploy access ...).
type AccessRequest struct {
	Op string
	// Integration names the gateway: its definition's name (unique in the
	// document) or its binding id (integration/<sandbox>/<name>, ...).
	Integration string
	Agent       string
	Client      string
	KeyID       string
	TTL         time.Duration
	ResponseID  string
	Outcome     string
	Evidence    string
}

// CodeNoSuchIntegration: the document attaches no access gateway by that
// name (or the name is ambiguous).
const CodeNoSuchIntegration = "no_such_integration"

// Access runs one key operation through the supervisor and returns its
// answer as JSON (a grant's token is in it once, never stored).
func Access(ctx context.Context, o Options, r AccessRequest) (json.RawMessage, error) {
	l, _, _, err := open(&o, false, false)
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, b := range l.doc.Bindings() {
		if b.Integration.Kind == contract.IntegrationAccess && (b.Name == r.Integration || b.ID == r.Integration) {
			ids = append(ids, b.ID)
		}
	}
	switch len(ids) {
	case 0:
		return nil, &Error{Code: CodeNoSuchIntegration, Message: fmt.Sprintf("the document attaches no access gateway named %q", r.Integration)}
	case 1:
	default:
		return nil, &Error{Code: CodeNoSuchIntegration, Message: fmt.Sprintf("%q names several access gateways (%v): give the id", r.Integration, ids)}
	}
	p := supervisorproto.AccessPayload{Op: r.Op, Integration: ids[0], Agent: r.Agent, Client: r.Client, KeyID: r.KeyID,
		TTLSeconds: r.TTL.Seconds(), ResponseID: r.ResponseID, Outcome: r.Outcome, Evidence: r.Evidence}
	resp, err := call(ctx, socketOf(l), supervisorproto.ActionAccess, p, 30*time.Second)
	if err != nil {
		return nil, &Error{Code: CodeSupervisorUnreachable, Message: err.Error()}
	}
	if resp.Error != nil {
		return nil, &Error{Code: resp.Error.Code, Message: resp.Error.Message}
	}
	return resp.Output, nil
}

// Revoke retires one agent of the running deployment as a catalog
// revocation says (supervisorproto.PolicyDrain or PolicyStop), through the
// supervisor's control socket; timeout bounds the wait for a drain's
// turns in flight. It is idempotent: an agent already retired is
// reported as it is.
func Revoke(ctx context.Context, o Options, p supervisorproto.RevokePayload, timeout time.Duration) (*supervisorproto.RevokeResult, error) {
	l, _, _, err := open(&o, false, false)
	if err != nil {
		return nil, err
	}
	var rr supervisorproto.RevokeResult
	if err := ask(ctx, socketOf(l), supervisorproto.ActionRevoke, p, timeout, &rr, "run it again (it is idempotent)"); err != nil {
		return nil, err
	}
	return &rr, nil
}

// ask sends one deploy request and decodes the supervisor's answer into
// out; again says what to do when no answer came.
func ask(ctx context.Context, socket, action string, payload any, timeout time.Duration, out any, again string) error {
	resp, err := call(ctx, socket, action, payload, timeout)
	if err != nil {
		return &Error{Code: CodeSupervisorUnreachable, Message: fmt.Sprintf("the supervisor on %s did not answer the %s: %v; %s", socket, action, err, again)}
	}
	if resp.Error != nil {
		return &Error{Code: CodeSupervisorFailed, Message: resp.Error.Error()}
	}
	if err := json.Unmarshal(resp.Output, out); err != nil {
		return &Error{Code: CodeSupervisorFailed, Message: "cannot read the supervisor's answer: " + err.Error()}
	}
	return nil
}
