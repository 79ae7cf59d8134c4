package runtime

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/hostproto"
)

// command resolves the host command line from the descriptor's runner.
func command(p *contract.RunPlan, opts *Options, path string) (bin string, args []string, dir string, err error) {
	rd := p.AdapterDescriptor
	spec, err := rd.Descriptor.RunnerSpec()
	if err != nil {
		return "", nil, "", err
	}
	root := rd.Root
	switch {
	case spec.Builtin != "":
		if opts.HostBinary == "" {
			return "", nil, "", fmt.Errorf("adapter %s is built into Fabric but no host binary is configured", rd.Descriptor.AdapterID)
		}
		bin = opts.HostBinary
	case rd.Descriptor.AdapterKind == contract.AdapterKindPython:
		py := spec.Command
		if py == "" {
			py = "python3"
		}
		if bin, err = lookPath(py, path); err != nil {
			return "", nil, "", err
		}
		args = append(args, "-m", spec.Module)
	default:
		cmd := spec.Command
		if strings.ContainsRune(cmd, '/') && !filepath.IsAbs(cmd) && root != "" {
			cmd = filepath.Join(root, cmd)
		}
		if bin, err = lookPath(cmd, path); err != nil {
			return "", nil, "", err
		}
		if spec.Script != "" {
			script := spec.Script
			if !filepath.IsAbs(script) && root != "" {
				script = filepath.Join(root, script)
			}
			args = append(args, script)
		}
	}
	args = append(args, spec.Args...)
	dir = spec.Cwd
	if dir != "" && !filepath.IsAbs(dir) && root != "" {
		dir = filepath.Join(root, dir)
	}
	if dir == "" && p.EnvironmentPlan != nil && p.EnvironmentPlan.Workspace != nil {
		dir = *p.EnvironmentPlan.Workspace
	}
	return bin, args, dir, nil
}

// checkExec runs check on the host command and on every required binary
// found on path (one not found is doctor's finding, not a start failure).
// A check error that is not already a RuntimeError becomes one.
func checkExec(check func(string) error, bin string, required []string, path string) error {
	if check == nil {
		return nil
	}
	paths := []string{bin}
	for _, b := range required {
		if p, err := lookPath(b, path); err == nil {
			paths = append(paths, p)
		}
	}
	for _, p := range paths {
		if err := check(p); err != nil {
			var re *contract.RuntimeError
			if errors.As(err, &re) {
				return err
			}
			return &contract.RuntimeError{Failure: contract.Failure{Stage: contract.StageStart, Code: "runtime_error", Path: p, Message: err.Error(), Err: err}}
		}
	}
	return nil
}

// lookPath finds name on the given PATH value.
func lookPath(name, path string) (string, error) {
	if strings.ContainsRune(name, '/') {
		if _, err := os.Stat(name); err != nil {
			return "", fmt.Errorf("runner command %s: %w", name, err)
		}
		return name, nil
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			continue
		}
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("runner command %q: %w", name, exec.ErrNotFound)
}

// hostEnv builds the host's environment: the base environment, the
// toolchain directories first on PATH, the runner's and the environment
// config's variables, then Fabric's own. The entries of the base it does
// not change are the base's own strings, not copies: a thousand hosts
// share one copy of the caller's environment.
func hostEnv(p *contract.RunPlan, opts *Options, runtimeID, home, artifacts string) (env []string, path string) {
	base := opts.Env
	if base == nil {
		base = os.Environ()
	}
	entries := map[string]string{} // name -> "NAME=value"
	for _, kv := range base {
		if k, _, ok := strings.Cut(kv, "="); ok {
			entries[k] = kv
		}
	}
	set := func(k, v string) { entries[k] = k + "=" + v }
	value := func(k string) string { return strings.TrimPrefix(entries[k], k+"=") }
	if len(opts.ExtraPath) > 0 {
		set("PATH", strings.Join(append(append([]string{}, opts.ExtraPath...), value("PATH")), string(os.PathListSeparator)))
	}
	if spec, err := p.AdapterDescriptor.Descriptor.RunnerSpec(); err == nil {
		for k, v := range spec.Env {
			set(k, v)
		}
		if spec.Builtin != "" {
			set(hostproto.EnvBundledAdapter, spec.Builtin)
		}
	}
	if p.EnvironmentPlan != nil {
		for k, v := range p.EnvironmentPlan.Env {
			set(k, v)
		}
	}
	set(hostproto.EnvRuntimeID, runtimeID)
	set(hostproto.EnvHome, home)
	set(hostproto.EnvProtocol, p.HostProtocol)
	if artifacts != "" {
		set(hostproto.EnvArtifacts, artifacts)
	} else {
		delete(entries, hostproto.EnvArtifacts)
	}
	if p.HostProtocol == contract.HostProtocolV2 {
		set(hostproto.EnvChannelFD, fmt.Sprint(hostproto.ChannelFD))
	}
	keys := make([]string, 0, len(entries))
	for k := range entries {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	env = make([]string, 0, len(keys))
	for _, k := range keys {
		env = append(env, entries[k])
	}
	return env, value("PATH")
}

// secretValues returns the values of every environment variable the config
// names in a *_env field, for scrubbing diagnostics.
func secretValues(cfg *contract.FabricConfig, lookup func(string) (string, bool)) []string {
	var names []string
	for _, m := range cfg.Models {
		if m.APIKeyEnv != nil {
			names = append(names, *m.APIKeyEnv)
		}
	}
	if cfg.MCP != nil {
		for _, s := range cfg.MCP.Servers {
			if a := s.Authentication; a != nil && a.ClientSecretEnv != nil {
				names = append(names, *a.ClientSecretEnv)
			}
		}
	}
	var out []string
	for _, n := range names {
		if v, ok := lookup(n); ok && v != "" {
			out = append(out, v)
		}
	}
	return out
}
