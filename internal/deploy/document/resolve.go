package document

import (
	"maps"
	"path/filepath"
	"slices"

	"github.com/fabric-runtime/fabric/contract"
)

// Binding scopes.
const (
	ScopeDeployment = "deployment"
	ScopeSandbox    = "sandbox"
	ScopeAgent      = "agent"
)

// Binding is one attached definition.
type Binding struct {
	Name    string
	Scope   string // ScopeDeployment, ScopeSandbox or ScopeAgent
	Sandbox string // the defining sandbox for sandbox and agent scope, else ""
	Owner   string // the defining agent for agent scope, else ""
	// ID is the stable resource identity: "integration/<name>" at deployment
	// scope, "integration/<sandbox>/<name>" at sandbox scope and
	// "integration/<sandbox>/<agent>/<name>" at agent scope.
	ID          string
	Integration contract.Integration
	Agents      []string // the agents that attach it, in document order
}

// AgentRef is one agent with where it sits.
type AgentRef struct {
	Sandbox       string
	Agent         contract.DeployedAgent
	ConfigPath    string // absolute; "" when the config is inline
	WorkspacePath string // absolute; "" when the sandbox names no workspace
}

// Bindings returns the definitions at least one agent attaches: the
// deployment's (by name), then per sandbox in document order its own (by
// name) and its agents' inline ones (agents in document order, by name).
// An unused definition is not returned.
func (d *Document) Bindings() []Binding {
	var out []Binding
	for _, b := range d.bindingTable().all() {
		if len(b.Agents) > 0 {
			out = append(out, *b)
		}
	}
	return out
}

// Attachments returns what one agent attaches: its references in their
// order, then its inline definitions by name. It is nil for an agent the
// document does not have.
func (d *Document) Attachments(agent string) []Binding {
	tab := d.bindingTable().byID
	for _, sb := range d.Deployment.Spec.Sandboxes {
		for _, a := range sb.Agents {
			if a.Name != agent {
				continue
			}
			var out []Binding
			for _, ref := range a.IntegrationRefs {
				if b := resolve(tab, sb.Name, ref); b != nil && !slices.ContainsFunc(out, func(x Binding) bool { return x.ID == b.ID }) {
					out = append(out, *b)
				}
			}
			for _, name := range slices.Sorted(maps.Keys(a.Integrations)) {
				out = append(out, *tab[inlineID(sb.Name, a.Name, name)])
			}
			return out
		}
	}
	return nil
}

// Credentials returns the credentials of the attached definitions, each
// once, in Bindings order. File paths are resolved against BaseDir.
func (d *Document) Credentials() []contract.CredentialRef {
	var out []contract.CredentialRef
	for _, b := range d.Bindings() {
		for _, c := range b.Integration.Credentials() {
			if c.File != "" {
				c.File = d.resolvePath(c.File)
			}
			if !slices.Contains(out, c) {
				out = append(out, c)
			}
		}
	}
	return out
}

// Agents returns every agent in document order.
func (d *Document) Agents() []AgentRef {
	var out []AgentRef
	for _, sb := range d.Deployment.Spec.Sandboxes {
		for _, a := range sb.Agents {
			r := AgentRef{Sandbox: sb.Name, Agent: a}
			if a.Config != "" {
				r.ConfigPath = d.resolvePath(a.Config)
			}
			if sb.Workspace != "" {
				r.WorkspacePath = d.resolvePath(sb.Workspace)
			}
			out = append(out, r)
		}
	}
	return out
}

func (d *Document) resolvePath(p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(d.BaseDir, p)
}

// bindingTable is every definition by ID, attached or not, in Bindings
// order (the order of ids).
type bindingTable struct {
	ids  []string
	byID map[string]*Binding
}

func (t bindingTable) all() []*Binding {
	out := make([]*Binding, len(t.ids))
	for i, id := range t.ids {
		out[i] = t.byID[id]
	}
	return out
}

func (d *Document) bindingTable() bindingTable {
	t := bindingTable{byID: map[string]*Binding{}}
	add := func(b Binding) {
		t.ids = append(t.ids, b.ID)
		t.byID[b.ID] = &b
	}
	spec := d.Deployment.Spec
	for _, name := range slices.Sorted(maps.Keys(spec.Integrations)) {
		add(Binding{Name: name, Scope: ScopeDeployment, ID: "integration/" + name, Integration: spec.Integrations[name]})
	}
	for _, sb := range spec.Sandboxes {
		for _, name := range slices.Sorted(maps.Keys(sb.Integrations)) {
			add(Binding{Name: name, Scope: ScopeSandbox, Sandbox: sb.Name, ID: "integration/" + sb.Name + "/" + name, Integration: sb.Integrations[name]})
		}
		for _, a := range sb.Agents {
			for _, name := range slices.Sorted(maps.Keys(a.Integrations)) {
				add(Binding{Name: name, Scope: ScopeAgent, Sandbox: sb.Name, Owner: a.Name, ID: inlineID(sb.Name, a.Name, name), Integration: a.Integrations[name]})
			}
		}
	}
	for _, sb := range spec.Sandboxes {
		for _, a := range sb.Agents {
			attach := func(b *Binding) {
				if b != nil && !slices.Contains(b.Agents, a.Name) {
					b.Agents = append(b.Agents, a.Name)
				}
			}
			for _, ref := range a.IntegrationRefs {
				attach(resolve(t.byID, sb.Name, ref))
			}
			for name := range a.Integrations {
				attach(t.byID[inlineID(sb.Name, a.Name, name)])
			}
		}
	}
	return t
}

// resolve finds what a reference from sandbox names: the sandbox's
// definition, else the deployment's.
func resolve(byID map[string]*Binding, sandbox, name string) *Binding {
	if b := byID["integration/"+sandbox+"/"+name]; b != nil {
		return b
	}
	return byID["integration/"+name]
}

func inlineID(sandbox, agent, name string) string {
	return "integration/" + sandbox + "/" + agent + "/" + name
}
