package doctor

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/catalog"
)

// Options are the doctor's view of the machine. Zero values use the real
// environment.
type Options struct {
	LookupEnv    func(string) (string, bool)
	ExtraPath    []string      // directories searched after PATH (for example a harness toolchain)
	ProbeTimeout time.Duration // per version probe; default 5s
	// CheckExec, if set, is asked about each binary before doctor runs
	// it (a version probe); an error fails that binary's check instead.
	CheckExec func(path string) error
}

// Input is what the doctor looks at.
type Input struct {
	AgentName string
	Config    *contract.FabricConfig // nil when loading failed
	ConfigErr error                  // loading failure, reported as failed checks
	Entry     *catalog.Entry         // selected descriptor; nil when resolution failed
	Plan      *contract.RunPlan      // nil when planning failed
	PlanErr   error                  // every planning finding, joined
}

// Run performs every check and returns the report. It never returns an
// error: problems are failed checks.
func Run(ctx context.Context, in Input, opts Options) contract.DoctorReport {
	if opts.LookupEnv == nil {
		opts.LookupEnv = os.LookupEnv
	}
	if opts.ProbeTimeout <= 0 {
		opts.ProbeTimeout = 5 * time.Second
	}
	rep := contract.DoctorReport{AgentName: in.AgentName, Checks: []contract.DoctorCheck{}}
	add := func(c contract.DoctorCheck) { rep.Checks = append(rep.Checks, c) }

	if in.ConfigErr != nil {
		for _, e := range Findings(in.ConfigErr) {
			add(failCheck("config", e))
		}
	} else if in.Config != nil {
		add(contract.DoctorCheck{Name: "config", Status: contract.DoctorPass, Message: "config loaded (" + in.Config.SchemaVersion + ")"})
	}
	if in.Entry != nil {
		rep.AdapterID = in.Entry.Descriptor.AdapterID
		add(contract.DoctorCheck{Name: "descriptor", Status: contract.DoctorPass,
			Message:  fmt.Sprintf("adapter %s from %s (%s)", in.Entry.Descriptor.AdapterID, in.Entry.Path, in.Entry.Source),
			Metadata: map[string]any{"adapter_id": in.Entry.Descriptor.AdapterID, "path": in.Entry.Path, "source": in.Entry.Source, "contract_version": in.Entry.Descriptor.ContractVersion}})
	}
	if in.PlanErr != nil {
		for _, e := range Findings(in.PlanErr) {
			add(failCheck("plan", e))
		}
	} else if in.Plan != nil {
		add(contract.DoctorCheck{Name: "plan", Status: contract.DoctorPass, Message: "config is compatible with the adapter"})
		for _, d := range in.Plan.Diagnostics {
			status := contract.DoctorWarn
			if d.Severity == contract.SeverityError {
				status = contract.DoctorFail
			}
			msg := d.Message
			if d.Path != "" {
				msg = d.Path + ": " + msg
			}
			add(contract.DoctorCheck{Name: "plan." + d.Code, Status: status, Message: msg, Metadata: d.Metadata})
		}
	}
	if in.Entry != nil {
		for _, c := range requirementChecks(ctx, in.Entry, opts) {
			add(c)
		}
	}
	if in.Config != nil {
		for _, c := range envChecks(in.Config, in.Entry, opts) {
			add(c)
		}
		for _, c := range pathChecks(in.Config) {
			add(c)
		}
	}
	rep.Status = contract.DoctorPass
	for _, c := range rep.Checks {
		if c.Status == contract.DoctorFail {
			rep.Status = contract.DoctorFail
			break
		}
		if c.Status == contract.DoctorWarn {
			rep.Status = contract.DoctorWarn
		}
	}
	return rep
}

// Findings splits a joined error into its parts.
func Findings(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, Findings(e)...)
		}
		return out
	}
	return []error{err}
}

func failCheck(prefix string, err error) contract.DoctorCheck {
	name := prefix
	md := map[string]any{}
	var f *contract.Failure
	var ce *contract.ConfigError
	var ke *contract.CapabilityError
	switch {
	case errors.As(err, &ce):
		f = &ce.Failure
	case errors.As(err, &ke):
		f = &ke.Failure
	}
	if f != nil {
		name = prefix + "." + f.Code
		md["code"] = f.Code
		if f.Path != "" {
			md["path"] = f.Path
		}
		for k, v := range f.Metadata {
			md[k] = v
		}
	}
	return contract.DoctorCheck{Name: name, Status: contract.DoctorFail, Message: err.Error(), Metadata: md}
}

func requirementChecks(ctx context.Context, e *catalog.Entry, opts Options) []contract.DoctorCheck {
	var out []contract.DoctorCheck
	d := &e.Descriptor
	bins := append([]string{}, d.Requirements.Binaries...)
	if spec, err := d.RunnerSpec(); err == nil && spec.Command != "" && spec.Builtin == "" && !containsStr(bins, spec.Command) {
		bins = append(bins, spec.Command)
	}
	for _, b := range bins {
		path, err := lookPath(b, opts.ExtraPath)
		if err != nil {
			out = append(out, contract.DoctorCheck{Name: "binary:" + b, Status: contract.DoctorFail, Message: fmt.Sprintf("%s not found on PATH", b)})
			continue
		}
		if err := checkExec(opts, path); err != nil {
			out = append(out, contract.DoctorCheck{Name: "binary:" + b, Status: contract.DoctorFail, Message: err.Error(), Metadata: map[string]any{"path": path}})
			continue
		}
		c := contract.DoctorCheck{Name: "binary:" + b, Status: contract.DoctorPass, Message: "found at " + path, Metadata: map[string]any{"path": path}}
		if args, ok := d.Requirements.VersionArgs[b]; ok {
			if v, err := probe(ctx, path, args, opts.ProbeTimeout); err == nil {
				c.Metadata["version"] = v
				c.Message += " (" + v + ")"
			} else {
				c.Status = contract.DoctorWarn
				c.Message += "; version probe failed: " + err.Error()
			}
		}
		out = append(out, c)
	}
	for _, f := range d.Requirements.Files {
		p := f
		if !filepath.IsAbs(p) && e.Root != "" {
			p = filepath.Join(e.Root, p)
		}
		if _, err := os.Stat(p); err != nil {
			out = append(out, contract.DoctorCheck{Name: "file:" + f, Status: contract.DoctorFail, Message: p + " does not exist"})
		} else {
			out = append(out, contract.DoctorCheck{Name: "file:" + f, Status: contract.DoctorPass, Message: p + " exists"})
		}
	}
	for _, s := range d.Requirements.Services {
		out = append(out, contract.DoctorCheck{Name: "service:" + s, Status: contract.DoctorWarn, Message: "required service is not checked by doctor"})
	}
	for _, pr := range d.Doctor {
		name := "adapter:" + pr.Name
		path, err := lookPath(pr.Command, opts.ExtraPath)
		if err != nil {
			out = append(out, contract.DoctorCheck{Name: name, Status: contract.DoctorFail, Message: pr.Command + " not found on PATH"})
			continue
		}
		if err := checkExec(opts, path); err != nil {
			out = append(out, contract.DoctorCheck{Name: name, Status: contract.DoctorFail, Message: err.Error()})
			continue
		}
		v, err := probe(ctx, path, pr.Args, opts.ProbeTimeout)
		if err != nil {
			out = append(out, contract.DoctorCheck{Name: name, Status: contract.DoctorFail, Message: err.Error()})
			continue
		}
		c := contract.DoctorCheck{Name: name, Status: contract.DoctorPass, Message: "ok"}
		if pr.Version {
			c.Message, c.Metadata = v, map[string]any{"version": v}
		}
		out = append(out, c)
	}
	return out
}

// envChecks reports every environment variable the config or descriptor
// names: present or missing (an empty value counts as missing), never its
// value.
func envChecks(cfg *contract.FabricConfig, e *catalog.Entry, opts Options) []contract.DoctorCheck {
	names := map[string]string{}
	if e != nil {
		for _, n := range e.Descriptor.Requirements.Env {
			names[n] = "descriptor requirements.env"
		}
	}
	for role, m := range cfg.Models {
		if m.APIKeyEnv != nil && *m.APIKeyEnv != "" {
			names[*m.APIKeyEnv] = "models." + role + ".api_key_env"
		}
	}
	if cfg.MCP != nil {
		for name, s := range cfg.MCP.Servers {
			if a := s.Authentication; a != nil && a.ClientSecretEnv != nil && *a.ClientSecretEnv != "" {
				names[*a.ClientSecretEnv] = "mcp.servers." + name + ".authentication.client_secret_env"
			}
		}
	}
	keys := make([]string, 0, len(names))
	for k := range names {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []contract.DoctorCheck
	for _, k := range keys {
		md := map[string]any{"source": names[k]}
		if v, ok := opts.LookupEnv(k); ok && v != "" {
			out = append(out, contract.DoctorCheck{Name: "env:" + k, Status: contract.DoctorPass, Message: k + " is set", Metadata: md})
		} else {
			out = append(out, contract.DoctorCheck{Name: "env:" + k, Status: contract.DoctorFail, Message: k + " is not set (named by " + names[k] + ")", Metadata: md})
		}
	}
	return out
}

// pathChecks reports configured local paths that do not exist.
func pathChecks(cfg *contract.FabricConfig) []contract.DoctorCheck {
	if cfg.Environment != nil && cfg.Environment.Provider != "" && cfg.Environment.Provider != contract.EnvironmentLocal {
		return nil
	}
	var out []contract.DoctorCheck
	if cfg.Skills != nil {
		for i, p := range cfg.Skills.Paths {
			out = append(out, existsCheck(fmt.Sprintf("skills.paths[%d]", i), p))
		}
	}
	if cfg.Environment != nil && cfg.Environment.Workspace != nil {
		out = append(out, existsCheck("environment.workspace", *cfg.Environment.Workspace))
	}
	return out
}

func existsCheck(field, p string) contract.DoctorCheck {
	if _, err := os.Stat(p); err != nil {
		return contract.DoctorCheck{Name: "path:" + field, Status: contract.DoctorFail, Message: p + " does not exist"}
	}
	return contract.DoctorCheck{Name: "path:" + field, Status: contract.DoctorPass, Message: p + " exists"}
}

func checkExec(opts Options, path string) error {
	if opts.CheckExec == nil {
		return nil
	}
	return opts.CheckExec(path)
}

func lookPath(name string, extra []string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	if strings.ContainsRune(name, os.PathSeparator) {
		return "", exec.ErrNotFound
	}
	for _, dir := range extra {
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", exec.ErrNotFound
}

// probe runs a binary briefly and returns the first non-empty output line.
func probe(ctx context.Context, path string, args []string, timeout time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.WaitDelay = time.Second
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	err := cmd.Run()
	if ctx.Err() != nil {
		return "", fmt.Errorf("%s timed out after %s", filepath.Base(path), timeout)
	}
	if err != nil {
		return "", fmt.Errorf("%s %s: %w", filepath.Base(path), strings.Join(args, " "), err)
	}
	sc := bufio.NewScanner(&buf)
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); line != "" {
			return line, nil
		}
	}
	return "", nil
}

func containsStr(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
