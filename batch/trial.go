package batch

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"sync"

	"github.com/fabric-runtime/fabric"
	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/deploy/document"
	"github.com/fabric-runtime/fabric/internal/strictdoc"
)

// Trial is one planned trial: a task, a config and a repeat.
type Trial struct {
	ID       string // <task>__<config>__rNN
	Task     string
	Config   string
	Repeat   int // from 1
	Digest   string
	// RunDigest covers what the agent's run depends on (the task, the
	// config, the repeat, Fabric's version): Digest without the grader.
	RunDigest string
	QuotaKey  string
	Dir      string // relative to the batch directory: trials/<task>/<config>/rNN
}

// TrialID is <task>__<config>__rNN (two digits at least, from 01).
func TrialID(task, config string, repeat int) string {
	return fmt.Sprintf("%s__%s__r%02d", task, config, repeat)
}

// Expand lists the trial ids of a spec in run order: repeat-major, then
// task, with the configs interleaved, so that an interrupted batch has even
// coverage and the configs' providers share the load.
func Expand(s *Spec) []Trial {
	var out []Trial
	for r := 1; r <= s.Repeats(); r++ {
		for _, t := range s.Tasks {
			for _, c := range s.Spec.Configs {
				out = append(out, Trial{
					ID: TrialID(t.ID, c.ID, r), Task: t.ID, Config: c.ID, Repeat: r,
					Dir: filepath.Join("trials", t.ID, c.ID, fmt.Sprintf("r%02d", r)),
				})
			}
		}
	}
	return out
}

// FabricVersion is the version of the Fabric module this program was built
// with ("(devel)" for a build from a checkout); it is part of every trial
// digest.
func FabricVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Path == "github.com/fabric-runtime/fabric" {
			return bi.Main.Version
		}
		for _, d := range bi.Deps {
			if d.Path == "github.com/fabric-runtime/fabric" {
				return d.Version
			}
		}
	}
	return "(devel)"
}

// agentConfig is one config of the spec, loaded with its overrides.
type agentConfig struct {
	id       string
	loaded   *fabric.Loaded
	digest   string
	quotaKey string
	model    string
	adapter  string
	planOnce sync.Once
	desc     *contract.AdapterDescriptor
}

// loadConfigs loads every config of the spec with its overrides applied;
// each error names the spec's file, line and path.
func loadConfigs(client *fabric.Client, s *Spec, lines func(string) int) (map[string]*agentConfig, error) {
	out := map[string]*agentConfig{}
	var errs Errors
	for i, c := range s.Spec.Configs {
		p := strictdoc.IndexPath("configs", i)
		ac, err := loadConfig(client, s, c)
		if err != nil {
			errs = append(errs, &Error{File: s.Path, Line: lines(p), Path: p, Code: CodeConfigInvalid, Message: fmt.Sprintf("config %q: %v", c.ID, err)})
			continue
		}
		out[c.ID] = ac
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return out, nil
}

func loadConfig(client *fabric.Client, s *Spec, c contract.BatchConfig) (*agentConfig, error) {
	var l *fabric.Loaded
	var err error
	switch {
	case c.Config != "":
		l, err = client.LoadConfig(s.resolve(c.Config), fabric.LoadOptions{})
	default:
		l, err = deploymentAgent(client, s.resolve(c.Deployment), c.Agent)
	}
	if err != nil {
		return nil, err
	}
	if len(c.Overrides) > 0 {
		if l, err = override(client, l, c.Overrides); err != nil {
			return nil, err
		}
	}
	cfg := l.Config
	cfg.Environment = cloneEnv(cfg.Environment)
	if cfg.Environment != nil {
		cfg.Environment.Workspace = nil
	}
	b, err := json.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(b)
	ac := &agentConfig{id: c.ID, loaded: l, digest: hex.EncodeToString(sum[:]), quotaKey: c.QuotaKey}
	if l.Config.Harness != nil {
		ac.adapter = l.Config.Harness.AdapterID
	}
	role := "default"
	if _, ok := l.Config.Models[role]; !ok {
		roles := slices.Sorted(maps.Keys(l.Config.Models))
		if len(roles) > 0 {
			role = roles[0]
		}
	}
	if m, ok := l.Config.Models[role]; ok {
		ac.model = m.Model
		if ac.quotaKey == "" {
			if m.APIKeyEnv != nil && *m.APIKeyEnv != "" {
				ac.quotaKey = *m.APIKeyEnv
			} else {
				ac.quotaKey = m.Provider
			}
		}
	}
	if ac.quotaKey == "" {
		ac.quotaKey = "default"
	}
	return ac, nil
}

func cloneEnv(e *contract.EnvironmentConfig) *contract.EnvironmentConfig {
	if e == nil {
		return nil
	}
	c := *e
	return &c
}

// deploymentAgent loads the FabricConfig of one agent of a deployment
// document, from its file or inline.
func deploymentAgent(client *fabric.Client, path, name string) (*fabric.Loaded, error) {
	doc, err := document.Load(path)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, a := range doc.Agents() {
		names = append(names, a.Agent.Name)
		if a.Agent.Name != name {
			continue
		}
		if a.ConfigPath != "" {
			return client.LoadConfig(a.ConfigPath, fabric.LoadOptions{})
		}
		return client.ParseConfig(a.Agent.Fabric, path+" (agent "+name+")", fabric.LoadOptions{BaseDir: doc.BaseDir})
	}
	return nil, fmt.Errorf("%s has no agent %q (agents: %s)", path, name, strings.Join(names, ", "))
}

// override sets each dotted path of the config to its value and reads the
// config again, so that the result passes the same checks as a file.
func override(client *fabric.Client, l *fabric.Loaded, overrides map[string]json.RawMessage) (*fabric.Loaded, error) {
	b, err := json.Marshal(l.Config)
	if err != nil {
		return nil, err
	}
	var tree map[string]any
	if err := json.Unmarshal(b, &tree); err != nil {
		return nil, err
	}
	for _, k := range slices.Sorted(maps.Keys(overrides)) {
		var v any
		if err := json.Unmarshal(overrides[k], &v); err != nil {
			return nil, fmt.Errorf("override %s: %w", k, err)
		}
		if err := setPath(tree, strings.Split(k, "."), v); err != nil {
			return nil, fmt.Errorf("override %s: %w", k, err)
		}
	}
	out, err := json.Marshal(tree)
	if err != nil {
		return nil, err
	}
	return client.ParseConfig(out, l.Path+" (with overrides)", fabric.LoadOptions{BaseDir: l.BaseDir})
}

func setPath(m map[string]any, parts []string, v any) error {
	for i, p := range parts {
		if p == "" {
			return fmt.Errorf("empty path segment")
		}
		if i == len(parts)-1 {
			m[p] = v
			return nil
		}
		next, ok := m[p]
		if !ok || next == nil {
			n := map[string]any{}
			m[p] = n
			m = n
			continue
		}
		n, ok := next.(map[string]any)
		if !ok {
			return fmt.Errorf("%s is not an object", strings.Join(parts[:i+1], "."))
		}
		m = n
	}
	return nil
}

// taskDigest hashes a task's definition and the files it brings (its input
// file, workspace template and task directory).
func taskDigest(t contract.BatchTask) (string, error) {
	h := sha256.New()
	b, _ := json.Marshal(t)
	h.Write(b)
	var paths []string
	if t.Input != nil && t.Input.File != "" {
		paths = append(paths, t.Input.File)
	}
	if t.Workspace != nil && t.Workspace.Template != "" {
		paths = append(paths, t.Workspace.Template)
	}
	if t.Dir != "" {
		paths = append(paths, t.Dir)
	}
	for _, p := range paths {
		if err := hashTree(h, p); err != nil {
			return "", fmt.Errorf("task %s: %w", t.ID, err)
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// hashTree writes every regular file's relative name, mode and content
// under root (or root itself) to h, in lexical order.
func hashTree(h io.Writer, root string) error {
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() || !d.Type().IsRegular() {
			if d.Type()&fs.ModeSymlink != 0 {
				target, _ := os.Readlink(p)
				fmt.Fprintf(h, "L %s %s\n", rel, target)
			}
			return nil
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		info, _ := d.Info()
		fmt.Fprintf(h, "F %s %o %d\n", rel, info.Mode().Perm(), info.Size())
		_, err = io.Copy(h, f)
		return err
	})
}

// effectiveGrader is the task's grader, else the spec's.
func (s *Spec) effectiveGrader(t contract.BatchTask) *contract.GraderSpec {
	if t.Grader != nil {
		return t.Grader
	}
	return s.Spec.Grader
}

// digests fills each trial's digest and quota key.
func digests(_ context.Context, s *Spec, trials []Trial, configs map[string]*agentConfig, grader Grader) error {
	tasks := map[string]string{}
	graders := map[string]string{}
	for _, t := range s.Tasks {
		d, err := taskDigest(t)
		if err != nil {
			return err
		}
		tasks[t.ID] = d
		g, _ := json.Marshal(s.effectiveGrader(t))
		if grader != nil {
			g = fmt.Appendf(nil, "go:%T", grader)
		}
		graders[t.ID] = string(g)
	}
	version := FabricVersion()
	for i := range trials {
		t := &trials[i]
		c := configs[t.Config]
		run := sha256.Sum256(fmt.Appendf(nil, "fabric.batch.run/v1\ntask %s\nconfig %s\nrepeat %d\nfabric %s\n",
			tasks[t.Task], c.digest, t.Repeat, version))
		t.RunDigest = hex.EncodeToString(run[:])
		sum := sha256.Sum256(fmt.Appendf(nil, "fabric.batch.trial/v1\nrun %s\ngrader %s\n", t.RunDigest, graders[t.Task]))
		t.Digest = hex.EncodeToString(sum[:])
		t.QuotaKey = c.quotaKey
	}
	return nil
}
