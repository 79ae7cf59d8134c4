package document

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/strictdoc"
)

// checker applies the rules that need more than one field: names, scopes
// and references. It runs after decoding, on what could be decoded.
type checker struct {
	rep   *strictdoc.Report
	lines map[string]int
	dep   *contract.Deployment
}

// scope is the integrations visible at one place, innermost first.
type scope struct {
	label string // "the deployment", `sandbox "main"`
	defs  map[string]contract.Integration
	path  string // of the integrations map
}

func (c *checker) check() {
	d := c.dep
	c.issues("metadata", func() []contract.DeploymentIssue { return d.Metadata.Validate() })
	c.issues("spec.supervisor", func() []contract.DeploymentIssue { return d.Spec.Supervisor.Validate() })
	top := scope{label: "the deployment", defs: d.Spec.Integrations, path: "spec.integrations"}
	c.definitions(top)
	sandboxLine := map[string]int{}
	agentLine := map[string]int{}
	for i := range d.Spec.Sandboxes {
		sb := &d.Spec.Sandboxes[i]
		p := strictdoc.IndexPath("spec.sandboxes", i)
		c.uniqueName(p+".name", sb.Name, "sandbox", sandboxLine)
		c.nonEmpty(p+".workspace", sb.Workspace)
		inner := scope{label: fmt.Sprintf("sandbox %q", sb.Name), defs: sb.Integrations, path: p + ".integrations"}
		c.definitions(inner, top)
		for j := range sb.Agents {
			c.agent(i, j, agentLine, inner, top)
		}
	}
}

func (c *checker) agent(i, j int, agentLine map[string]int, enclosing ...scope) {
	sb := &c.dep.Spec.Sandboxes[i]
	a := &sb.Agents[j]
	p := strictdoc.IndexPath(strictdoc.IndexPath("spec.sandboxes", i)+".agents", j)
	c.uniqueName(p+".name", a.Name, "agent", agentLine)
	switch _, inline := c.lines[p+".fabric"]; {
	case a.Config != "" && inline:
		c.fail(CodeInvalidValue, p+".fabric", "an agent has exactly one of config (a file) and fabric (inline), not both")
	case !inline && !c.present(p+".config"):
		c.fail(CodeMissingField, p+".config", "an agent needs config (a FabricConfig file) or fabric (an inline FabricConfig)")
	default:
		c.nonEmpty(p+".config", a.Config)
	}
	if a.Restart != nil {
		c.issues(p+".restart", a.Restart.Validate)
	}
	c.issues(p, a.ValidateStart)
	own := scope{label: fmt.Sprintf("agent %q", a.Name), defs: a.Integrations, path: p + ".integrations"}
	c.definitions(own, enclosing...)
	first := map[string]int{}
	for k, ref := range a.IntegrationRefs {
		rp := strictdoc.IndexPath(p+".integrationRefs", k)
		if prev, dup := first[ref]; dup {
			c.fail(CodeDuplicateReference, rp, fmt.Sprintf("%q is already listed at integrationRefs[%d]", ref, prev))
			continue
		}
		first[ref] = k
		if _, ok := a.Integrations[ref]; ok {
			c.fail(CodeDuplicateReference, rp, fmt.Sprintf("%q is defined inline on this agent, which attaches it already; drop the reference", ref))
			continue
		}
		if slices.ContainsFunc(enclosing, func(s scope) bool { _, ok := s.defs[ref]; return ok }) {
			continue
		}
		if where := c.definedElsewhere(ref, i, j); where != "" {
			c.fail(CodeReferenceNotVisible, rp, fmt.Sprintf("%q is defined %s, which is not visible here; an agent references only its sandbox's and the deployment's integrations", ref, where))
			continue
		}
		var visible []string
		for _, s := range enclosing {
			visible = append(visible, slices.Sorted(maps.Keys(s.defs))...)
		}
		c.fail(CodeUnknownReference, rp, fmt.Sprintf("no integration named %q is defined in sandbox %q or the deployment (visible: %s)", ref, sb.Name, list(visible)))
	}
}

// definedElsewhere says where name is defined outside what agent (i, j)
// sees, or "".
func (c *checker) definedElsewhere(name string, i, j int) string {
	for si, sb := range c.dep.Spec.Sandboxes {
		if _, ok := sb.Integrations[name]; ok && si != i {
			return fmt.Sprintf("in sandbox %q", sb.Name)
		}
		for aj, a := range sb.Agents {
			if _, ok := a.Integrations[name]; ok && (si != i || aj != j) {
				return fmt.Sprintf("inline on agent %q, which attaches it to that agent only", a.Name)
			}
		}
	}
	return ""
}

// definitions checks the integrations of one scope: names, values, and
// names that shadow an enclosing scope's.
func (c *checker) definitions(s scope, enclosing ...scope) {
	for _, name := range slices.Sorted(maps.Keys(s.defs)) {
		p := strictdoc.ChildPath(s.path, name)
		c.issues(p, func() []contract.DeploymentIssue { return contract.ValidateName(name) })
		in := s.defs[name]
		c.issues(p, in.Validate)
		for _, e := range enclosing {
			if _, ok := e.defs[name]; ok {
				c.fail(CodeShadowedName, p, fmt.Sprintf("%q is also defined by %s (%s); one name means one integration: rename one of them", name, e.label, strictdoc.ChildPath(e.path, name)))
				break
			}
		}
	}
}

// uniqueName checks a sandbox or agent name and that no other of its sort
// has it; seen maps names to their lines.
func (c *checker) uniqueName(path, name, what string, seen map[string]int) {
	c.issues(path, func() []contract.DeploymentIssue { return contract.ValidateName(name) })
	if name == "" {
		return
	}
	if first, dup := seen[name]; dup {
		c.fail(CodeDuplicateName, path, fmt.Sprintf("%s name %q is already used on line %d", what, name, first))
		return
	}
	seen[name] = c.lineOf(path)
}

// nonEmpty rejects an optional string written as "".
func (c *checker) nonEmpty(path, s string) {
	if s == "" && c.present(path) {
		c.fail(CodeInvalidValue, path, "must not be empty; omit the field instead")
	}
}

// issues records what a contract Validate method finds below path.
func (c *checker) issues(path string, validate func() []contract.DeploymentIssue) {
	for _, is := range validate() {
		c.fail(is.Code, contract.JoinIssuePath(path, is.Path), is.Message)
	}
}

func (c *checker) failedNear(path string) bool {
	return c.rep.Has(func(e *Error) bool { return within(e.Path, path) || within(path, e.Path) })
}

// within reports whether path is at or below parent.
func within(path, parent string) bool {
	return path == parent || parent != "" &&
		strings.HasPrefix(path, parent) && (path[len(parent)] == '.' || path[len(parent)] == '[')
}

// fail records an error, except where one was recorded already at, above or
// below path: the value there is incomplete or known to be wrong.
func (c *checker) fail(code, path, msg string) {
	if !c.failedNear(path) {
		c.rep.Add(code, path, c.lineOf(path), msg)
	}
}

// present reports whether the document wrote a value at path.
func (c *checker) present(path string) bool {
	_, ok := c.lines[path]
	return ok
}

// lineOf is the line of path or of its nearest written ancestor.
func (c *checker) lineOf(path string) int {
	for {
		if l, ok := c.lines[path]; ok {
			return l
		}
		i := strings.LastIndexAny(path, ".[")
		if i <= 0 {
			return c.lines[""]
		}
		path = path[:i]
	}
}

func list(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}
