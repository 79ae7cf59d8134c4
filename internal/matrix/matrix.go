package matrix

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/fabric-runtime/fabric/internal/catalog"
)

// OutputPath is where the matrix is written, relative to the repository root.
const OutputPath = "docs/harnesses.md"

// Descriptor is one descriptor document given to the generator.
type Descriptor struct {
	Name string // file name
	Data []byte
}

// Row is one adapter's line of the matrix.
type Row struct {
	ID          string
	Source      string // "bundled" or "npm <package> <version>"
	Harness     string
	Protocol    string
	Accepts     []string
	Modes       []string // system instruction modes
	ToolPolicy  []string // tools.* accepted
	MCP         []string // mcp and mcp.* accepted
	Skills      bool
	Cancel      bool
	Streaming   bool
	Resume      []string // settings that resume or select a session
	Permissions []string // settings that govern permissions or sandboxing
	Interfaces  []string // name (kind)
	Settings    []string
	Pinned      []string // pinned harness packages with versions
}

// npmPackage is one top-level package of a harnesses project's lockfile.
type npmPackage struct {
	Name    string
	Version string
	Bins    []string
	Peers   []string
	// Optional are its optional dependencies (a launcher's platform
	// packages, which a project may name itself to pin the binary).
	Optional []string
	Project  string // project directory relative to the repository root
}

// Build collects the rows for the bundled descriptors and the descriptors
// discoverable under root/harnesses.
func Build(root string, bundled []Descriptor) ([]Row, error) {
	pkgs, nodeModules, err := harnessPackages(root)
	if err != nil {
		return nil, err
	}
	var rows []Row
	for _, d := range bundled {
		cat, err := catalog.Discover(catalog.Options{Bundled: []catalog.Bundled{{Name: d.Name, Data: d.Data}}})
		if err != nil {
			return nil, err
		}
		for _, e := range cat.Entries() {
			rows = append(rows, row(e, "bundled", pinnedFor(e.Descriptor.Requirements.Binaries, pkgs)))
		}
	}
	for _, nm := range nodeModules {
		cat, err := catalog.Discover(catalog.Options{NodeModules: []string{nm}})
		if err != nil {
			return nil, err
		}
		for _, e := range cat.Entries() {
			pkgName := packageOf(nm, e.Path)
			src := "npm " + pkgName
			var pinned []string
			for _, p := range pkgs {
				if p.Name == pkgName && filepath.Join(root, p.Project, "node_modules") == nm {
					src += " " + p.Version
					for _, peer := range p.Peers {
						for _, q := range pkgs {
							if q.Name == peer && q.Project == p.Project && len(q.Bins) > 0 {
								pinned = append(pinned, q.Name+" "+q.Version)
							}
						}
					}
				}
			}
			if len(pinned) == 0 {
				pinned = pinnedFor(e.Descriptor.Requirements.Binaries, pkgs)
			}
			rows = append(rows, row(e, src, pinned))
		}
	}
	sort.SliceStable(rows, func(i, j int) bool {
		if rows[i].ID != rows[j].ID {
			return rows[i].ID < rows[j].ID
		}
		return rows[i].Source < rows[j].Source
	})
	return rows, nil
}

var (
	permissionSetting = regexp.MustCompile(`(?i)permission|approval|sandbox|allow|deny`)
	resumeSetting     = regexp.MustCompile(`(?i)resume|session`)
)

func row(e *catalog.Entry, source string, pinned []string) Row {
	d := e.Descriptor
	r := Row{ID: d.AdapterID, Source: source, Harness: d.Harness, Accepts: slices.Clone(d.Config.Accepts),
		Cancel: d.Capabilities.Cancellation, Streaming: d.Capabilities.Streaming, Pinned: pinned}
	sort.Strings(r.Accepts)
	for _, m := range d.Config.SystemInstructionModes {
		r.Modes = append(r.Modes, string(m))
	}
	r.Protocol = "fabric.host/v1"
	if p, ok := d.Runner["protocol"].(string); ok && p != "" {
		r.Protocol = p
	}
	for _, a := range r.Accepts {
		switch {
		case strings.HasPrefix(a, "tools."):
			r.ToolPolicy = append(r.ToolPolicy, strings.TrimPrefix(a, "tools."))
		case a == "mcp" || strings.HasPrefix(a, "mcp."):
			r.MCP = append(r.MCP, a)
		case a == "skills":
			r.Skills = true
		}
	}
	r.Settings = settingNames(d.SettingsSchema)
	for _, s := range r.Settings {
		if permissionSetting.MatchString(s) {
			r.Permissions = append(r.Permissions, s)
		}
		if resumeSetting.MatchString(s) {
			r.Resume = append(r.Resume, s)
		}
	}
	if v, ok := d.Capabilities.Metadata["resume"]; ok && v == true {
		r.Resume = append(r.Resume, "capabilities.metadata.resume")
	}
	for _, i := range d.Interfaces {
		r.Interfaces = append(r.Interfaces, fmt.Sprintf("%s (%s)", i.Name, i.Kind))
	}
	if r.Harness == "" {
		r.Harness = "—"
	}
	return r
}

// settingNames lists the top-level properties of a settings schema.
func settingNames(schema json.RawMessage) []string {
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if len(schema) == 0 || json.Unmarshal(schema, &s) != nil {
		return nil
	}
	out := make([]string, 0, len(s.Properties))
	for k := range s.Properties {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// pinnedFor names the pinned packages that provide the binaries (other
// than node, the runtime every npm harness needs).
func pinnedFor(bins []string, pkgs []npmPackage) []string {
	var out []string
	for _, b := range bins {
		if b == "node" {
			continue
		}
		for _, p := range pkgs {
			if !slices.Contains(p.Bins, b) {
				continue
			}
			if v := p.Name + " " + p.Version; !slices.Contains(out, v) {
				out = append(out, v)
			}
			// The platform package holding the binary, when the project
			// names it beside the launcher.
			for _, q := range pkgs {
				if q.Project == p.Project && slices.Contains(p.Optional, q.Name) {
					if v := q.Name + " " + q.Version; !slices.Contains(out, v) {
						out = append(out, v)
					}
				}
			}
		}
	}
	return out
}

// packageOf names the npm package whose root holds a descriptor found in nm.
func packageOf(nm, path string) string {
	rel, err := filepath.Rel(nm, path)
	if err != nil {
		return filepath.Base(filepath.Dir(path))
	}
	parts := strings.Split(filepath.ToSlash(rel), "/")
	if strings.HasPrefix(parts[0], "@") && len(parts) > 1 {
		return parts[0] + "/" + parts[1]
	}
	return parts[0]
}

// harnessPackages reads the direct dependencies of every npm project under
// root/harnesses (harnesses/package.json and harnesses/*/package.json)
// from their lockfiles, and lists the projects' node_modules directories
// that exist.
func harnessPackages(root string) ([]npmPackage, []string, error) {
	projects := []string{"harnesses"}
	subs, _ := filepath.Glob(filepath.Join(root, "harnesses", "*", "package.json"))
	sort.Strings(subs)
	for _, s := range subs {
		rel, _ := filepath.Rel(root, filepath.Dir(s))
		projects = append(projects, filepath.ToSlash(rel))
	}
	var pkgs []npmPackage
	var nms []string
	for _, proj := range projects {
		dir := filepath.Join(root, proj)
		var manifest struct {
			Dependencies map[string]string `json:"dependencies"`
		}
		data, err := os.ReadFile(filepath.Join(dir, "package.json"))
		if err != nil {
			if os.IsNotExist(err) {
				continue
			}
			return nil, nil, err
		}
		if err := json.Unmarshal(data, &manifest); err != nil {
			return nil, nil, fmt.Errorf("%s/package.json: %w", proj, err)
		}
		var lock struct {
			Packages map[string]struct {
				Version string          `json:"version"`
				Bin     json.RawMessage `json:"bin"`
				Peers   map[string]any  `json:"peerDependencies"`
				Opt     map[string]any  `json:"optionalDependencies"`
			} `json:"packages"`
		}
		if data, err := os.ReadFile(filepath.Join(dir, "package-lock.json")); err == nil {
			if err := json.Unmarshal(data, &lock); err != nil {
				return nil, nil, fmt.Errorf("%s/package-lock.json: %w", proj, err)
			}
		}
		for _, name := range sortedKeys(manifest.Dependencies) {
			p := npmPackage{Name: name, Version: manifest.Dependencies[name], Project: proj}
			if l, ok := lock.Packages["node_modules/"+name]; ok {
				if l.Version != "" {
					p.Version = l.Version
				}
				var bins map[string]string
				if json.Unmarshal(l.Bin, &bins) == nil {
					p.Bins = sortedKeys(bins)
				}
				p.Peers = sortedKeys(l.Peers)
				p.Optional = sortedKeys(l.Opt)
			}
			pkgs = append(pkgs, p)
		}
		pkgs = creditLinkedHosts(dir, proj, pkgs)
		if st, err := os.Stat(filepath.Join(dir, "node_modules")); err == nil && st.IsDir() {
			nms = append(nms, filepath.Join(dir, "node_modules"))
		}
	}
	return pkgs, nms, nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Render writes the matrix as Markdown.
func Render(rows []Row) []byte {
	var b bytes.Buffer
	b.WriteString("<!-- Code generated by cmd/fabric-matrix (go generate ./internal/matrix); DO NOT EDIT. -->\n\n")
	b.WriteString("# Harness capability matrix\n\n")
	b.WriteString("Generated from the adapter descriptors: the bundled ones and those discoverable from the npm\n")
	b.WriteString("projects under `harnesses/` (package roots in their `node_modules`). Pinned versions come from\n")
	b.WriteString("the projects' lockfiles. Regenerate with `go generate ./internal/matrix` after `harnesses/install.sh`;\n")
	b.WriteString("`TestMatrixUpToDate` fails when this file drifts.\n\n")
	b.WriteString("Columns: **Tool policy** lists the `tools.*` fields the adapter accepts; **MCP** the `mcp` fields;\n")
	b.WriteString("**Cancel** and **Streaming** are the descriptor's capabilities; **Resume** and **Permissions** list the\n")
	b.WriteString("adapter settings that select a session or govern tool permissions and sandboxing; **Interfaces** are the\n")
	b.WriteString("declared harness interfaces (see `adapterkit/harnessui`).\n\n")
	b.WriteString("| Adapter | Source | Harness (pinned) | Protocol | Tool policy | MCP | Skills | Cancel | Resume | Permissions | Streaming | Interfaces |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
			r.ID, r.Source, harnessCell(r), r.Protocol, list(r.ToolPolicy), list(r.MCP), yes(r.Skills), yes(r.Cancel),
			codeList(r.Resume), codeList(r.Permissions), yes(r.Streaming), list(r.Interfaces))
	}
	b.WriteString("\n## FabricConfig fields and settings per adapter\n\n")
	b.WriteString("| Adapter | Source | Accepted FabricConfig fields (`config.accepts`) | System instruction modes | `harness.settings` |\n")
	b.WriteString("|---|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", r.ID, r.Source, codeList(r.Accepts), list(r.Modes), codeList(r.Settings))
	}
	return b.Bytes()
}

func harnessCell(r Row) string {
	switch {
	case len(r.Pinned) == 0:
		return r.Harness
	case r.Harness == "—":
		return strings.Join(r.Pinned, ", ")
	}
	return r.Harness + ": " + strings.Join(r.Pinned, ", ")
}

func yes(v bool) string {
	if v {
		return "yes"
	}
	return "no"
}

func list(v []string) string {
	if len(v) == 0 {
		return "—"
	}
	return strings.Join(v, ", ")
}

func codeList(v []string) string {
	if len(v) == 0 {
		return "—"
	}
	out := make([]string, len(v))
	for i, s := range v {
		out[i] = "`" + s + "`"
	}
	return strings.Join(out, ", ")
}

// Generate builds and renders the matrix for the repository at root.
func Generate(root string, bundled []Descriptor) ([]byte, error) {
	rows, err := Build(root, bundled)
	if err != nil {
		return nil, err
	}
	return Render(rows), nil
}

// creditLinkedHosts reads the lockfile of the project in dir for folders
// linked into it ("file:" dependencies, such as an adapter host of ours).
// Such a folder is unversioned; its binaries stand for the packages it
// drives, so they are credited to its peers pinned in the same project.
// Lockfile errors were reported by the main read.
func creditLinkedHosts(dir, proj string, pkgs []npmPackage) []npmPackage {
	data, err := os.ReadFile(filepath.Join(dir, "package-lock.json"))
	if err != nil {
		return pkgs
	}
	var lock struct {
		Packages map[string]struct {
			Link     bool            `json:"link"`
			Resolved string          `json:"resolved"`
			Bin      json.RawMessage `json:"bin"`
			Peers    map[string]any  `json:"peerDependencies"`
		} `json:"packages"`
	}
	if json.Unmarshal(data, &lock) != nil {
		return pkgs
	}
	for _, key := range sortedKeys(lock.Packages) {
		if l := lock.Packages[key]; strings.HasPrefix(key, "node_modules/") && l.Link {
			target := lock.Packages[l.Resolved]
			var bins map[string]string
			if json.Unmarshal(target.Bin, &bins) != nil || len(bins) == 0 {
				continue
			}
			for i := range pkgs {
				if _, peer := target.Peers[pkgs[i].Name]; peer && pkgs[i].Project == proj {
					pkgs[i].Bins = append(pkgs[i].Bins, sortedKeys(bins)...)
				}
			}
		}
	}
	return pkgs
}
