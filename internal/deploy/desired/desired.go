package desired

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/deploy/document"
)

// FormatVersion is the version of State as the supervisor journals it. A
// supervisor refuses a journal of another version rather than rewrite it.
const FormatVersion = "fabric.deploy.desired/v1alpha1"

// Service kinds: what a supervisor runs for an attached definition.
const (
	// ServiceMCPProcess is one supervised MCP server process (mcpServer,
	// transport http, run) shared by the agents attached to it.
	ServiceMCPProcess = "mcp-process"
	// ServiceModelRoute is one route of the supervisor's brokered model
	// proxy (inference, brokered: true).
	ServiceModelRoute = "model-route"
	// ServiceAccessGateway is one access gateway (access) serving the
	// agents attached to it.
	ServiceAccessGateway = "access-gateway"
)

// State is a deployment's desired state: what apply hands the supervisor
// and what the supervisor journals. It holds credential references, never
// values.
type State struct {
	FormatVersion string `json:"format_version"`
	Name          string `json:"name"`
	UID           string `json:"uid"`
	// Digest is the document's digest (document.Document.Digest).
	Digest   string    `json:"digest"`
	Agents   []Agent   `json:"agents"`
	Services []Service `json:"services"`
}

// Agent is one deployed agent: its FabricConfig with every static
// attachment applied, and what the supervisor adds when it starts it.
type Agent struct {
	Name    string `json:"name"`
	Sandbox string `json:"sandbox"`
	// Config is the agent's FabricConfig (JSON) with metadata.name set to
	// Name and the agent's MCP attachments in its mcp section.
	Config  json.RawMessage `json:"config"`
	BaseDir string          `json:"base_dir"`
	// Source is the config's file, or "<document>#<agent>" when inline.
	Source  string                 `json:"source"`
	Restart contract.RestartPolicy `json:"restart"`
	// Inference, when attached, is the model route the supervisor binds
	// into every model role of Config at start.
	Inference *Inference `json:"inference,omitempty"`
	// Attachments are the binding ids the agent attaches, sorted.
	Attachments []string `json:"attachments"`
	// Start is always or on_demand; IdleStopSeconds stops an on_demand
	// agent after that long without a turn.
	Start           string `json:"start,omitempty"`
	IdleStopSeconds int    `json:"idle_stop_seconds,omitempty"`
	// Generation is the digest of everything above: an agent whose
	// generation is unchanged is not restarted by apply.
	Generation string `json:"generation"`
}

// Inference is an agent's model route.
type Inference struct {
	Binding string `json:"binding"`
	API     string `json:"api"`
	Model   string `json:"model,omitempty"`
	// Brokered routes go through the supervisor's model proxy, which
	// issues the agent a placeholder; direct ones give the agent BaseURL
	// and the credential itself (in its host environment only).
	Brokered   bool                    `json:"brokered"`
	BaseURL    string                  `json:"base_url,omitempty"`
	Credential *contract.CredentialRef `json:"credential,omitempty"`
}

// Service is one integration service the supervisor runs.
type Service struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Kind string `json:"kind"`
	// BaseDir is where relative paths of the definition resolve.
	BaseDir   string                         `json:"base_dir"`
	MCP       *contract.MCPRun               `json:"mcp,omitempty"`
	Inference *contract.InferenceIntegration `json:"inference,omitempty"`
	Access    *contract.AccessIntegration    `json:"access,omitempty"`
	Agents    []string                       `json:"agents"`
	// Generation is the digest of the definition: a changed one restarts
	// (a process) or re-routes (a model route) the service only.
	Generation string `json:"generation"`
}

// Loader reads an agent's FabricConfig: from its file (path set) or from
// its inline object (data set); it returns the loaded config and the
// directory its relative paths resolved against.
type Loader func(path string, data []byte, baseDir string) (*contract.FabricConfig, string, error)

// Compute builds the desired state of a parsed document. Only attached
// definitions become services.
func Compute(doc *document.Document, load Loader) (*State, error) {
	d := &doc.Deployment
	st := &State{FormatVersion: FormatVersion, Name: d.Metadata.Name, UID: d.Metadata.UID, Digest: doc.Digest, Agents: []Agent{}, Services: []Service{}}
	for _, b := range doc.Bindings() {
		svc, ok := service(b, doc.BaseDir)
		if ok {
			st.Services = append(st.Services, svc)
		}
	}
	for _, ref := range doc.Agents() {
		a, err := agent(doc, ref, load)
		if err != nil {
			return nil, err
		}
		st.Agents = append(st.Agents, a)
	}
	return st, nil
}

func service(b document.Binding, baseDir string) (Service, bool) {
	svc := Service{ID: b.ID, Name: b.Name, BaseDir: baseDir, Agents: append([]string{}, b.Agents...)}
	switch b.Integration.Kind {
	case contract.IntegrationMCPServer:
		m := b.Integration.MCPServer
		if m.Transport != contract.MCPServerHTTP || m.Run == nil {
			return Service{}, false
		}
		run := *m.Run
		svc.Kind, svc.MCP = ServiceMCPProcess, &run
	case contract.IntegrationInference:
		inf := *b.Integration.Inference
		if !inf.Brokered {
			return Service{}, false
		}
		if inf.Credential != nil && inf.Credential.File != "" && !filepath.IsAbs(inf.Credential.File) {
			c := *inf.Credential
			c.File = filepath.Join(baseDir, c.File)
			inf.Credential = &c
		}
		svc.Kind, svc.Inference = ServiceModelRoute, &inf
	case contract.IntegrationAccess:
		acc := *b.Integration.Access
		svc.Kind, svc.Access = ServiceAccessGateway, &acc
	default:
		return Service{}, false
	}
	// The agents a service serves are not part of its generation: attaching
	// another agent re-binds a running service, it does not restart it.
	svc.Generation = digest(struct {
		Kind      string
		MCP       *contract.MCPRun
		Inference *contract.InferenceIntegration
		Access    *contract.AccessIntegration
	}{svc.Kind, svc.MCP, svc.Inference, svc.Access})
	return svc, true
}

func agent(doc *document.Document, ref document.AgentRef, load Loader) (Agent, error) {
	src := ref.ConfigPath
	if src == "" {
		src = doc.Path + "#" + ref.Agent.Name
	}
	cfg, base, err := load(ref.ConfigPath, ref.Agent.Fabric, doc.BaseDir)
	if err != nil {
		return Agent{}, fmt.Errorf("agent %s: %w", ref.Agent.Name, err)
	}
	cfg.Metadata.Name = ref.Agent.Name
	a := Agent{Name: ref.Agent.Name, Sandbox: ref.Sandbox, BaseDir: base, Source: src, Attachments: []string{}}
	a.Restart = ref.Agent.Restart.Effective()
	a.Start, a.IdleStopSeconds = ref.Agent.Start, ref.Agent.IdleStopSeconds
	if a.Start == contract.StartAlways {
		a.Start = ""
	}
	var inside []string // attachments that change what the agent runs
	for _, b := range doc.Attachments(ref.Agent.Name) {
		a.Attachments = append(a.Attachments, b.ID)
		if b.Integration.Kind != contract.IntegrationAccess {
			inside = append(inside, b.ID)
		}
		switch b.Integration.Kind {
		case contract.IntegrationMCPServer:
			attachMCP(cfg, b)
		case contract.IntegrationInference:
			inf := b.Integration.Inference
			a.Inference = &Inference{Binding: b.ID, API: inf.API, Model: inf.Model, Brokered: inf.Brokered}
			if !inf.Brokered {
				a.Inference.BaseURL = inf.BaseURL
				if c := inf.Credential; c != nil {
					cc := *c
					if cc.File != "" && !filepath.IsAbs(cc.File) {
						cc.File = filepath.Join(doc.BaseDir, cc.File)
					}
					a.Inference.Credential = &cc
				}
			}
		}
	}
	sort.Strings(a.Attachments)
	sort.Strings(inside)
	if ws := ref.WorkspacePath; ws != "" {
		if cfg.Environment == nil {
			cfg.Environment = &contract.EnvironmentConfig{Provider: contract.EnvironmentLocal}
		}
		if cfg.Environment.Workspace == nil {
			w := filepath.Join(ws, ref.Agent.Name)
			cfg.Environment.Workspace = &w
		}
	}
	raw, err := json.Marshal(cfg)
	if err != nil {
		return Agent{}, fmt.Errorf("agent %s: encode config: %w", ref.Agent.Name, err)
	}
	a.Config = raw
	a.Generation = digest(struct {
		Config      json.RawMessage
		BaseDir     string
		Restart     contract.RestartPolicy
		Inference   *Inference
		Attachments []string
		Start       string
		IdleStop    int
	}{a.Config, a.BaseDir, a.Restart, a.Inference, inside, a.Start, a.IdleStopSeconds})
	return a, nil
}

// attachMCP puts an attached MCP server into the config's mcp section
// under the definition's name (the adapter's MCP rules then apply at
// planning, as for any server the config names itself).
func attachMCP(cfg *contract.FabricConfig, b document.Binding) {
	m := b.Integration.MCPServer
	srv := contract.MCPServerConfig{Exposure: contract.MCPExposureHarnessNative}
	switch {
	case m.Transport == contract.MCPServerStdio:
		srv.Transport, srv.URL = contract.MCPTransportStdio, m.Command[0]
		srv.Args = append([]string{}, m.Command[1:]...)
		if len(m.Env) > 0 {
			srv.Env = m.Env
		}
	case m.Run != nil:
		srv.Transport = contract.MCPTransportStreamableHTTP
		srv.URL = fmt.Sprintf("http://127.0.0.1:%d%s", m.Run.Port, m.Run.EffectivePath())
	default:
		srv.Transport, srv.URL = contract.MCPTransportStreamableHTTP, m.URL
	}
	if cfg.MCP == nil {
		cfg.MCP = &contract.MCPConfig{}
	}
	if cfg.MCP.Servers == nil {
		cfg.MCP.Servers = map[string]contract.MCPServerConfig{}
	}
	cfg.MCP.Servers[b.Name] = srv
}

// digest is the sha256 of v's JSON encoding, hex.
func digest(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("desired: digest of an unencodable value: %v", err))
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Agent returns the named agent, or nil.
func (s *State) Agent(name string) *Agent {
	for i := range s.Agents {
		if s.Agents[i].Name == name {
			return &s.Agents[i]
		}
	}
	return nil
}

// Service returns the service with the binding id, or nil.
func (s *State) Service(id string) *Service {
	for i := range s.Services {
		if s.Services[i].ID == id {
			return &s.Services[i]
		}
	}
	return nil
}

// Credentials returns every credential reference the state needs, each
// once, in a stable order.
func (s *State) Credentials() []contract.CredentialRef {
	seen := map[contract.CredentialRef]bool{}
	var out []contract.CredentialRef
	add := func(c *contract.CredentialRef) {
		if c != nil && !seen[*c] {
			seen[*c] = true
			out = append(out, *c)
		}
	}
	for _, a := range s.Agents {
		if a.Inference != nil {
			add(a.Inference.Credential)
		}
	}
	for _, svc := range s.Services {
		if svc.Inference != nil {
			add(svc.Inference.Credential)
		}
	}
	sort.Slice(out, func(i, j int) bool { return Key(out[i]) < Key(out[j]) })
	return out
}

// Key names a credential reference in maps and messages ("env:NAME",
// "file:/abs/path"); it never contains the value.
func Key(c contract.CredentialRef) string {
	if c.Env != "" {
		return "env:" + c.Env
	}
	return "file:" + c.File
}

// EnvName is the host environment variable an agent's direct credential
// is passed in: the referenced variable's own name for {env}, a name
// derived from the binding for {file}.
func EnvName(binding string, c contract.CredentialRef) string {
	if c.Env != "" {
		return c.Env
	}
	var b strings.Builder
	b.WriteString("FABRIC_CREDENTIAL_")
	for _, r := range strings.ToUpper(binding) {
		if (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}
