package deploy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	fabric "github.com/fabric-runtime/fabric"
	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/agentctl"
	"github.com/fabric-runtime/fabric/internal/clientopts"
	"github.com/fabric-runtime/fabric/internal/deploy/desired"
	"github.com/fabric-runtime/fabric/internal/deploy/document"
	"github.com/fabric-runtime/fabric/internal/supervisorproto"
)

// Error codes of the deploy verbs. docs/deploy.md explains each one.
const (
	CodeDocumentInvalid        = "document_invalid"         // the document did not parse; Details has every finding
	CodeConfigInvalid          = "agent_config_invalid"     // an agent's FabricConfig did not load
	CodeUIDChanged             = "uid_changed"              // the state dir belongs to a deployment with another uid
	CodeDestroyUnfinished      = "destroy_unfinished"       // a destroy was interrupted: run destroy again
	CodePendingOtherDigest     = "pending_apply_mismatch"   // an interrupted apply of another document: re-apply that one, or destroy
	CodeStateLocked            = "state_locked"             // another deploy operation holds deployment.lock
	CodeStateUnreadable        = "state_unreadable"         // intent.json cannot be read
	CodeStateUnwritable        = "state_unwritable"         // the state dir cannot be written
	CodeUnsupportedStateFormat = "unsupported_state_format" // intent.json of another format version
	CodeCredentialMissing      = "credential_missing"       // a referenced env credential is not set for apply
	CodeSupervisorUnreachable  = "supervisor_unreachable"   // no supervisor answers on the socket
	CodeSupervisorStartFailed  = "supervisor_start_failed"  // the supervisor process did not come up
	CodeResourceTaken          = "resource_taken"           // a bound resource was taken over (a port held by a foreign process)
	CodeDrifted                = "drifted"                  // export refuses while the running deployment differs from the document
	CodeNotApplied             = "not_applied"              // export or status of a deployment never applied
	CodeSupervisorFailed       = "supervisor_failed"        // the supervisor refused or failed a request
	CodeDocumentExists         = "document_exists"          // init would overwrite a document
)

// Error is a deploy verb's failure; Details carry the findings behind it.
type Error struct {
	Code    string            `json:"code"`
	Message string            `json:"message"`
	Details []*document.Error `json:"details,omitempty"`
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// Options are what every verb takes.
type Options struct {
	// File is the deployment document.
	File string
	// StateDir defaults to .fabric/<metadata.name>/ beside the document.
	StateDir string
	// Timeout bounds apply's readiness wait (default 2 minutes).
	Timeout time.Duration
	// Executable is the fabric binary started as the supervisor (default:
	// this program).
	Executable string
	// LookupEnv resolves {env} credentials (default os.LookupEnv).
	LookupEnv func(string) (string, bool)
	// Client loads agent configs (default fabric.New).
	Client *fabric.Client
	Logger *slog.Logger
}

func (o *Options) defaults() {
	if o.LookupEnv == nil {
		o.LookupEnv = os.LookupEnv
	}
	if o.Client == nil {
		o.Client = fabric.New(clientopts.Binary(os.Getenv)...)
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Timeout <= 0 {
		o.Timeout = 2 * time.Minute
	}
	if o.Executable == "" {
		o.Executable, _ = os.Executable()
	}
}

// loaded is a parsed document with its desired state and state dir.
type loaded struct {
	doc   *document.Document
	state *desired.State
	dir   string
}

func load(o *Options, compute bool) (*loaded, error) {
	doc, err := document.Load(o.File)
	if err != nil {
		var es document.Errors
		if errors.As(err, &es) {
			return nil, &Error{Code: CodeDocumentInvalid, Message: fmt.Sprintf("%s: %d problem(s); the first: %s", o.File, len(es), es[0].Error()), Details: es}
		}
		var e1 *document.Error
		if errors.As(err, &e1) {
			return nil, &Error{Code: CodeDocumentInvalid, Message: e1.Error(), Details: []*document.Error{e1}}
		}
		return nil, &Error{Code: CodeDocumentInvalid, Message: err.Error()}
	}
	l := &loaded{doc: doc, dir: o.StateDir}
	if l.dir == "" {
		l.dir = filepath.Join(doc.BaseDir, ".fabric", doc.Deployment.Metadata.Name)
	}
	if l.dir, err = filepath.Abs(l.dir); err != nil {
		return nil, err
	}
	if compute {
		st, err := desired.Compute(doc, func(path string, data []byte, baseDir string) (*contract.FabricConfig, string, error) {
			var ld *fabric.Loaded
			var err error
			if path != "" {
				ld, err = o.Client.LoadConfig(path, fabric.LoadOptions{})
			} else {
				ld, err = o.Client.ParseConfig(data, "inline.json", fabric.LoadOptions{BaseDir: baseDir})
			}
			if err != nil {
				return nil, "", err
			}
			return &ld.Config, ld.BaseDir, nil
		})
		if err != nil {
			return nil, &Error{Code: CodeConfigInvalid, Message: err.Error()}
		}
		l.state = st
	}
	return l, nil
}

// socketOf is the supervisor's control socket for a document.
func socketOf(l *loaded) string {
	sp := l.doc.Deployment.Spec.Supervisor
	if sp.Kind == contract.SupervisorExternal {
		return sp.Socket
	}
	return filepath.Join(l.dir, supervisorproto.SocketFile)
}

// call sends one deploy request to the supervisor.
func call(ctx context.Context, socket, action string, payload any, timeout time.Duration) (*agentctl.Response, error) {
	req := &agentctl.Request{Operation: agentctl.OpDeploy, Action: action, TimeoutSeconds: timeout.Seconds()}
	if payload != nil {
		b, err := json.Marshal(payload)
		if err != nil {
			return nil, err
		}
		req.Payload = b
	}
	ctx, cancel := context.WithTimeout(ctx, timeout+30*time.Second)
	defer cancel()
	c := &agentctl.Client{Socket: socket}
	return c.Do(ctx, req)
}

// supervisorStatus asks the supervisor for its status; nil when none
// answers.
func supervisorStatus(ctx context.Context, socket string) (*supervisorproto.Status, error) {
	resp, err := call(ctx, socket, supervisorproto.ActionStatus, nil, 5*time.Second)
	if err != nil {
		return nil, err
	}
	if resp.Error != nil {
		return nil, resp.Error
	}
	var st supervisorproto.Status
	if err := json.Unmarshal(resp.Output, &st); err != nil {
		return nil, err
	}
	return &st, nil
}
