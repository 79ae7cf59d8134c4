package contract

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"net"
	"net/url"
	"path"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// DeploymentSchemaVersion is the schema_version of a deployment document.
const DeploymentSchemaVersion = "fabric.deployment/v1alpha1"

// Supervisor kinds.
const (
	SupervisorProcess  = "process"  // fabric deploy starts and owns the supervisor process
	SupervisorExternal = "external" // a supervisor already listens on SupervisorSpec.Socket
)

// Integration kinds.
const (
	IntegrationMCPServer = "mcpServer"
	IntegrationInference = "inference"
	IntegrationAccess    = "access"
)

// MCP server transports of an MCPServerIntegration.
const (
	MCPServerStdio = "stdio"
	MCPServerHTTP  = "http"
)

// Inference APIs of an InferenceIntegration.
const (
	InferenceOpenAIResponses       = "openai-responses"
	InferenceOpenAIChatCompletions = "openai-chat-completions"
	InferenceAnthropicMessages     = "anthropic-messages"
)

// Restart policies and their defaults.
const (
	RestartNever     = "never"
	RestartOnFailure = "on-failure"

	DefaultRestartMax = 5
	// DefaultMCPPath is the path of a run MCP server that declares none.
	DefaultMCPPath = "/mcp"
)

// DefaultRestartBackoff is [initial, cap] in seconds when a policy declares
// none (a new slice at each call).
func DefaultRestartBackoff() []float64 { return []float64{1, 30} }

// Deployment is a fabric.deployment/v1alpha1 document: one supervisor, the
// integrations it offers, and the sandboxes whose agents it runs.
type Deployment struct {
	SchemaVersion string             `json:"schema_version" jsonschema:"const=fabric.deployment/v1alpha1"`
	Metadata      DeploymentMetadata `json:"metadata"`
	Spec          DeploymentSpec     `json:"spec"`
}

// DeploymentMetadata names a deployment. UID is its immutable ownership
// identity (a lowercase UUID): two documents with the same name and another
// uid are different deployments.
type DeploymentMetadata struct {
	Name string `json:"name"`
	UID  string `json:"uid"`
}

// Validate checks the name and the uid.
func (m *DeploymentMetadata) Validate() []DeploymentIssue {
	var is issues
	is.name("name", m.Name)
	if !UUIDPattern().MatchString(m.UID) {
		is.add("uid", IssueInvalidValue, "uid must be a lowercase UUID (8-4-4-4-12 hex digits)")
	}
	return is
}

// DeploymentSpec is what a deployment runs. Integrations here are available
// to every sandbox and attached to no agent until one references them.
type DeploymentSpec struct {
	Supervisor   SupervisorSpec         `json:"supervisor"`
	Integrations map[string]Integration `json:"integrations,omitempty"`
	Sandboxes    []SandboxSpec          `json:"sandboxes"`
}

// MarshalJSON writes a nil Sandboxes list as [], never null.
func (s DeploymentSpec) MarshalJSON() ([]byte, error) {
	type plain DeploymentSpec
	if s.Sandboxes == nil {
		s.Sandboxes = []SandboxSpec{}
	}
	return json.Marshal(plain(s))
}

// SupervisorSpec says where the deployment's supervisor runs. Socket is
// required (and absolute) for kind external and absent for kind process.
type SupervisorSpec struct {
	Kind   string `json:"kind"`
	Socket string `json:"socket,omitempty"`
}

// Validate checks the kind and the socket.
func (s *SupervisorSpec) Validate() []DeploymentIssue {
	var is issues
	switch s.Kind {
	case SupervisorProcess:
		if s.Socket != "" {
			is.add("socket", IssueInvalidValue, "socket applies only to kind %s; a process supervisor chooses its own", SupervisorExternal)
		}
	case SupervisorExternal:
		switch {
		case s.Socket == "":
			is.add("socket", IssueMissingField, "kind external needs the socket the supervisor listens on")
		case !strings.HasPrefix(s.Socket, "/") || path.Clean(s.Socket) != s.Socket:
			is.add("socket", IssueInvalidValue, "socket must be an absolute, clean path")
		}
	default:
		is.add("kind", IssueInvalidValue, "kind must be %s or %s", SupervisorProcess, SupervisorExternal)
	}
	return is
}

// SandboxSpec is one sandbox: a workspace shared by its agents and the
// integrations available to them.
type SandboxSpec struct {
	Name string `json:"name"`
	// Workspace is relative to the document's directory when not absolute.
	Workspace    string                 `json:"workspace,omitempty"`
	Integrations map[string]Integration `json:"integrations,omitempty"`
	Agents       []DeployedAgent        `json:"agents"`
}

// MarshalJSON writes a nil Agents list as [], never null.
func (s SandboxSpec) MarshalJSON() ([]byte, error) {
	type plain SandboxSpec
	if s.Agents == nil {
		s.Agents = []DeployedAgent{}
	}
	return json.Marshal(plain(s))
}

// DeployedAgent is one agent of a sandbox. Exactly one of Config (a
// FabricConfig file, relative to the document's directory when not absolute)
// and Fabric (an inline FabricConfig object) is set. Agent names are unique
// across the whole deployment.
type DeployedAgent struct {
	Name   string          `json:"name"`
	Config string          `json:"config,omitempty"`
	Fabric json.RawMessage `json:"fabric,omitempty"`
	// IntegrationRefs name definitions of the enclosing sandbox or the
	// deployment that this agent attaches.
	IntegrationRefs []string `json:"integrationRefs,omitempty"`
	// Integrations are defined for, and attached to, this agent only.
	Integrations map[string]Integration `json:"integrations,omitempty"`
	Restart      *RestartPolicy         `json:"restart,omitempty"`
	// Start is always (default: apply starts the agent) or on_demand (the
	// supervisor starts it when an access gateway request arrives).
	Start string `json:"start,omitempty"`
	// IdleStopSeconds stops an on_demand agent after this long without a
	// turn (0: never).
	IdleStopSeconds int `json:"idle_stop_seconds,omitempty"`
}

// Agent start modes.
const (
	StartAlways   = "always"
	StartOnDemand = "on_demand"
)

// ValidateStart checks start and idle_stop_seconds.
func (a *DeployedAgent) ValidateStart() []DeploymentIssue {
	var is issues
	if a.Start != "" && a.Start != StartAlways && a.Start != StartOnDemand {
		is.add("start", IssueInvalidValue, "start must be %s or %s", StartAlways, StartOnDemand)
	}
	if a.IdleStopSeconds < 0 {
		is.add("idle_stop_seconds", IssueInvalidValue, "idle_stop_seconds must not be negative")
	} else if a.IdleStopSeconds > 0 && a.Start != StartOnDemand {
		is.add("idle_stop_seconds", IssueInvalidValue, "idle_stop_seconds is for start: on_demand agents")
	}
	return is
}

// RestartPolicy says whether a supervised process that exits is started
// again. Zero fields take the defaults: policy on-failure, max 5, backoff
// [1, 30]. BackoffSeconds is [initial, cap] with 0 < initial <= cap.
type RestartPolicy struct {
	Policy         string    `json:"policy,omitempty"`
	Max            int       `json:"max,omitempty"`
	BackoffSeconds []float64 `json:"backoff_seconds,omitempty"`
}

// Effective returns p with its defaults applied; a nil p is the default
// policy.
func (p *RestartPolicy) Effective() RestartPolicy {
	var e RestartPolicy
	if p != nil {
		e = *p
	}
	if e.Policy == "" {
		e.Policy = RestartOnFailure
	}
	if e.Policy == RestartNever {
		return RestartPolicy{Policy: RestartNever}
	}
	if e.Max == 0 {
		e.Max = DefaultRestartMax
	}
	if len(e.BackoffSeconds) == 0 {
		e.BackoffSeconds = DefaultRestartBackoff()
	} else {
		e.BackoffSeconds = slices.Clone(e.BackoffSeconds)
	}
	return e
}

// Validate checks the policy's values.
func (p *RestartPolicy) Validate() []DeploymentIssue {
	var is issues
	switch p.Policy {
	case "", RestartOnFailure:
		if p.Max < 0 {
			is.add("max", IssueInvalidValue, "max must be at least 1 (0 or absent means %d)", DefaultRestartMax)
		}
		if p.BackoffSeconds != nil {
			b := p.BackoffSeconds
			switch {
			case len(b) != 2:
				is.add("backoff_seconds", IssueInvalidValue, "backoff_seconds must be [initial, cap], two numbers")
			case !(b[0] > 0) || math.IsInf(b[0], 0):
				is.add("backoff_seconds[0]", IssueInvalidValue, "the initial backoff must be a finite number above 0")
			case !(b[1] >= b[0]) || math.IsInf(b[1], 0):
				is.add("backoff_seconds[1]", IssueInvalidValue, "the backoff cap must be finite and at least the initial backoff")
			}
		}
	case RestartNever:
		if p.Max != 0 {
			is.add("max", IssueInvalidValue, "max applies only to policy %s", RestartOnFailure)
		}
		if p.BackoffSeconds != nil {
			is.add("backoff_seconds", IssueInvalidValue, "backoff_seconds applies only to policy %s", RestartOnFailure)
		}
	default:
		is.add("policy", IssueInvalidValue, "policy must be %s or %s", RestartNever, RestartOnFailure)
	}
	return is
}

// CredentialRef names where a secret is read, never the secret: exactly one
// of Env (an environment-variable name) and File (absolute, or relative to
// the document's directory).
type CredentialRef struct {
	Env  string `json:"env,omitempty"`
	File string `json:"file,omitempty"`
}

// Validate checks that exactly one well-formed key is set.
func (c *CredentialRef) Validate() []DeploymentIssue {
	var is issues
	switch {
	case c.Env != "" && c.File != "":
		is.add("", IssueInvalidCredential, "a credential is {env: NAME} or {file: PATH}, not both")
	case c.Env != "":
		if !EnvNamePattern().MatchString(c.Env) {
			is.add("env", IssueInvalidCredential, "env must be an environment-variable name (%s)", EnvNamePattern())
		}
	case c.File == "":
		is.add("", IssueInvalidCredential, "a credential is {env: NAME} or {file: PATH}")
	}
	return is
}

// MCPServerIntegration is an MCP server. Transport stdio runs Command (the
// whole argv) per attaching agent; transport http has exactly one of Run (a
// shared process the supervisor runs) and URL (an existing server).
type MCPServerIntegration struct {
	Transport string            `json:"transport"`
	Command   []string          `json:"command,omitempty"`
	Env       map[string]string `json:"env,omitempty"`
	Run       *MCPRun           `json:"run,omitempty"`
	URL       string            `json:"url,omitempty"`
}

// MCPRun is an HTTP MCP server process supervised by the deployment. Path
// defaults to DefaultMCPPath; Restart to the default RestartPolicy.
type MCPRun struct {
	Command []string          `json:"command"`
	Port    int               `json:"port"`
	Path    string            `json:"path,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	Restart *RestartPolicy    `json:"restart,omitempty"`
}

// EffectivePath is Path, or DefaultMCPPath when unset.
func (r *MCPRun) EffectivePath() string {
	if r.Path == "" {
		return DefaultMCPPath
	}
	return r.Path
}

// Validate checks the transport's fields.
func (m *MCPServerIntegration) Validate() []DeploymentIssue {
	var is issues
	switch m.Transport {
	case MCPServerStdio:
		is.argv("command", m.Command)
		is.env("env", m.Env)
		if m.Run != nil {
			is.add("run", IssueInvalidValue, "run applies only to transport %s", MCPServerHTTP)
		}
		if m.URL != "" {
			is.add("url", IssueInvalidValue, "url applies only to transport %s", MCPServerHTTP)
		}
	case MCPServerHTTP:
		if m.Command != nil {
			is.add("command", IssueInvalidValue, "transport http takes run.command, not command")
		}
		if m.Env != nil {
			is.add("env", IssueInvalidValue, "transport http takes run.env, not env")
		}
		switch {
		case m.Run != nil && m.URL != "":
			is.add("url", IssueInvalidValue, "transport http takes exactly one of run and url, not both")
		case m.Run != nil:
			is.argv("run.command", m.Run.Command)
			if m.Run.Port < 1 || m.Run.Port > 65535 {
				is.add("run.port", IssueInvalidValue, "port must be between 1 and 65535")
			}
			if m.Run.Path != "" && !strings.HasPrefix(m.Run.Path, "/") {
				is.add("run.path", IssueInvalidValue, "path must start with /")
			}
			is.env("run.env", m.Run.Env)
			if m.Run.Restart != nil {
				is.nest("run.restart", m.Run.Restart.Validate())
			}
		case m.URL != "":
			is.url("url", m.URL)
		default:
			is.add("run", IssueMissingField, "transport http needs run (a server to start) or url (a server to attach)")
		}
	default:
		is.add("transport", IssueInvalidValue, "transport must be %s or %s", MCPServerStdio, MCPServerHTTP)
	}
	return is
}

// Credentials returns nil: an MCP server's env holds plain values.
func (m *MCPServerIntegration) Credentials() []CredentialRef { return nil }

// InferenceIntegration is a model endpoint. When Brokered, agents reach it
// through the supervisor, which holds Credential; otherwise agents are given
// the credential themselves.
type InferenceIntegration struct {
	API        string         `json:"api"`
	BaseURL    string         `json:"base_url"`
	Model      string         `json:"model,omitempty"`
	Credential *CredentialRef `json:"credential,omitempty"`
	Brokered   bool           `json:"brokered,omitempty"`
}

// InferenceAPIs lists the accepted InferenceIntegration.API values (a new
// slice at each call).
func InferenceAPIs() []string {
	return []string{InferenceOpenAIResponses, InferenceOpenAIChatCompletions, InferenceAnthropicMessages}
}

// Validate checks the API, the base URL and the credential.
func (m *InferenceIntegration) Validate() []DeploymentIssue {
	var is issues
	if apis := InferenceAPIs(); !slices.Contains(apis, m.API) {
		is.add("api", IssueInvalidValue, "api must be one of %s", strings.Join(apis, ", "))
	}
	is.url("base_url", m.BaseURL)
	if m.Credential != nil {
		is.nest("credential", m.Credential.Validate())
	} else if m.Brokered {
		is.add("credential", IssueMissingField, "brokered: true needs a credential for the supervisor to hold")
	}
	return is
}

// Credentials returns the credential, if any.
func (m *InferenceIntegration) Credentials() []CredentialRef {
	if m.Credential == nil {
		return nil
	}
	return []CredentialRef{*m.Credential}
}

// Access gateway policies (AccessIntegration).
const (
	AccessIdempotencyRequired = "required"
	AccessIdempotencyOptional = "optional"
	AccessContinue            = "continue"
	AccessCancel              = "cancel"
	// DefaultAccessRetentionSeconds is how long a finished response can be
	// retrieved and resumed.
	DefaultAccessRetentionSeconds = 3600
	// DefaultAccessListen is a gateway's address when none is declared.
	DefaultAccessListen = "127.0.0.1:0"
)

// AccessIntegration is an access gateway: a supervised service through
// which outside clients reach the attached agents over the OpenAI
// Responses and Chat Completions APIs, each with keys scoped to one
// (client, agent) pair. It grants nothing by itself: keys are issued with
// fabric deploy access grant.
type AccessIntegration struct {
	// Listen is host:port, loopback by default; any other host needs TLS.
	Listen string     `json:"listen,omitempty"`
	TLS    *AccessTLS `json:"tls,omitempty"`
	// Clients are the names keys can be granted to.
	Clients []string `json:"clients"`
	// Idempotency: required (every POST carries an Idempotency-Key) or
	// optional (default; SDK retries are still matched to their turn).
	Idempotency string `json:"idempotency,omitempty"`
	// OnDisconnect: continue (default: the turn finishes and can be
	// resumed) or cancel.
	OnDisconnect string `json:"on_disconnect,omitempty"`
	// OnRevoke: cancel (default: a revoked key's running turns end) or
	// continue.
	OnRevoke string `json:"on_revoke,omitempty"`
	// RetentionSeconds is the resume window of finished responses
	// (default DefaultAccessRetentionSeconds).
	RetentionSeconds int `json:"retention_seconds,omitempty"`
}

// AccessTLS names the gateway's certificate and key files.
type AccessTLS struct {
	Cert string `json:"cert"`
	Key  string `json:"key"`
}

// Validate checks the address, TLS, clients and policies.
func (a *AccessIntegration) Validate() []DeploymentIssue {
	var is issues
	listen := a.Listen
	if listen == "" {
		listen = DefaultAccessListen
	}
	host, port, err := net.SplitHostPort(listen)
	if err != nil || port == "" {
		is.add("listen", IssueInvalidValue, "listen must be host:port")
	} else if ip := net.ParseIP(host); (ip == nil || !ip.IsLoopback()) && host != "localhost" && a.TLS == nil {
		is.add("tls", IssueMissingField, "a gateway listening beyond loopback (%s) needs tls with cert and key files", host)
	}
	if a.TLS != nil {
		if a.TLS.Cert == "" {
			is.add("tls.cert", IssueMissingField, "tls.cert names the certificate file")
		}
		if a.TLS.Key == "" {
			is.add("tls.key", IssueMissingField, "tls.key names the key file")
		}
	}
	if len(a.Clients) == 0 {
		is.add("clients", IssueMissingField, "clients names who keys can be granted to")
	}
	seen := map[string]bool{}
	for i, c := range a.Clients {
		path := fmt.Sprintf("clients[%d]", i)
		is.name(path, c)
		if seen[c] {
			is.add(path, IssueInvalidValue, "client %q is listed twice", c)
		}
		seen[c] = true
	}
	for _, f := range []struct {
		path, v string
		ok      []string
	}{
		{"idempotency", a.Idempotency, []string{"", AccessIdempotencyRequired, AccessIdempotencyOptional}},
		{"on_disconnect", a.OnDisconnect, []string{"", AccessContinue, AccessCancel}},
		{"on_revoke", a.OnRevoke, []string{"", AccessContinue, AccessCancel}},
	} {
		if !slices.Contains(f.ok, f.v) {
			is.add(f.path, IssueInvalidValue, "%s must be %s", f.path, strings.Join(f.ok[1:], " or "))
		}
	}
	if a.RetentionSeconds < 0 {
		is.add("retention_seconds", IssueInvalidValue, "retention_seconds must not be negative")
	}
	return is
}

// Credentials returns nil: a gateway's keys are issued by grant, never
// declared.
func (a *AccessIntegration) Credentials() []CredentialRef { return nil }

// IntegrationVariant is the behaviour every integration kind provides.
// Validate reports problems at paths relative to the integration.
type IntegrationVariant interface {
	Validate() []DeploymentIssue
	Credentials() []CredentialRef
}

// Integration is a union of integration kinds: Kind names the one non-nil
// variant field. In JSON the variant's fields sit beside "kind".
//
// Adding a kind is adding its type (with Validate and Credentials), a field
// here and one line in integrationKinds.
type Integration struct {
	Kind      string
	MCPServer *MCPServerIntegration
	Inference *InferenceIntegration
	Access    *AccessIntegration
}

// integrationKinds registers every kind of Integration.
var integrationKinds = []integrationKind{
	kindOf(IntegrationMCPServer, func(i *Integration) **MCPServerIntegration { return &i.MCPServer }),
	kindOf(IntegrationInference, func(i *Integration) **InferenceIntegration { return &i.Inference }),
	kindOf(IntegrationAccess, func(i *Integration) **AccessIntegration { return &i.Access }),
}

type integrationKind struct {
	name string
	typ  reflect.Type // the variant struct
	get  func(*Integration) IntegrationVariant
	make func(*Integration) IntegrationVariant // allocates the variant in place
}

func kindOf[T any, P interface {
	*T
	IntegrationVariant
}](name string, field func(*Integration) *P) integrationKind {
	return integrationKind{
		name: name,
		typ:  reflect.TypeFor[T](),
		get: func(i *Integration) IntegrationVariant {
			if p := *field(i); p != nil {
				return p
			}
			return nil
		},
		make: func(i *Integration) IntegrationVariant {
			p := P(new(T))
			*field(i) = p
			return p
		},
	}
}

func lookupKind(name string) (integrationKind, bool) {
	for _, k := range integrationKinds {
		if k.name == name {
			return k, true
		}
	}
	return integrationKind{}, false
}

// IntegrationKinds returns the registered kinds, in registration order.
func IntegrationKinds() []string {
	names := make([]string, len(integrationKinds))
	for i, k := range integrationKinds {
		names[i] = k.name
	}
	return names
}

// NewIntegration returns an Integration of the given kind whose variant is
// allocated and empty, ready to be filled through Variant.
func NewIntegration(kind string) (Integration, bool) {
	k, ok := lookupKind(kind)
	if !ok {
		return Integration{}, false
	}
	i := Integration{Kind: kind}
	k.make(&i)
	return i, true
}

// IntegrationOf wraps a variant (*MCPServerIntegration, ...) in an
// Integration. It panics on a type that is not registered.
func IntegrationOf(v IntegrationVariant) Integration {
	for _, k := range integrationKinds {
		if reflect.TypeOf(v) == reflect.PointerTo(k.typ) {
			i := Integration{Kind: k.name}
			reflect.ValueOf(k.make(&i)).Elem().Set(reflect.ValueOf(v).Elem())
			return i
		}
	}
	panic(fmt.Sprintf("contract: %T is not an integration kind", v))
}

// Variant returns the variant Kind names, or nil when it is unset or Kind
// is unknown.
func (i Integration) Variant() IntegrationVariant {
	k, ok := lookupKind(i.Kind)
	if !ok {
		return nil
	}
	return k.get(&i)
}

// Validate checks that Kind names the one variant set, then the variant.
func (i Integration) Validate() []DeploymentIssue {
	var is issues
	set := 0
	for _, k := range integrationKinds {
		if k.get(&i) != nil {
			set++
		}
	}
	v := i.Variant()
	switch {
	case v == nil && i.Kind == "":
		is.add("kind", IssueMissingField, "kind is required")
	case v == nil:
		is.add("kind", IssueInvalidValue, "kind %q has no value", i.Kind)
	case set > 1:
		is.add("kind", IssueInvalidValue, "an integration holds exactly one kind")
	default:
		is = append(is, v.Validate()...)
	}
	return is
}

// Credentials returns the credentials of the variant.
func (i Integration) Credentials() []CredentialRef {
	if v := i.Variant(); v != nil {
		return v.Credentials()
	}
	return nil
}

// MarshalJSON writes the variant's fields beside "kind".
func (i Integration) MarshalJSON() ([]byte, error) {
	v := i.Variant()
	if v == nil {
		return nil, fmt.Errorf("contract: integration of kind %q has no value", i.Kind)
	}
	body, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	kind, _ := json.Marshal(i.Kind) // a string cannot fail
	out := append([]byte(`{"kind":`), kind...)
	if len(body) > 2 {
		out = append(out, ',')
	}
	return append(out, body[1:]...), nil
}

// UnmarshalJSON reads "kind" and the fields of that kind, rejecting fields
// the kind does not have.
func (i *Integration) UnmarshalJSON(data []byte) error {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return err
	}
	var kind string
	if err := json.Unmarshal(fields["kind"], &kind); err != nil || kind == "" {
		return fmt.Errorf("contract: integration needs a string kind")
	}
	next, ok := NewIntegration(kind)
	if !ok {
		return fmt.Errorf("contract: unknown integration kind %q (known: %s)", kind, strings.Join(IntegrationKinds(), ", "))
	}
	delete(fields, "kind")
	rest, err := json.Marshal(fields)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(strings.NewReader(string(rest)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(next.Variant()); err != nil {
		return fmt.Errorf("contract: integration of kind %s: %w", kind, err)
	}
	*i = next
	return nil
}

// The patterns compile at first use: a program that never reads a
// deployment pays nothing for them.
var (
	deploymentNamePattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z][a-z0-9-]{0,39}$`) })
	uuidPattern           = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
	})
	envNamePattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })
)

// DeploymentNamePattern is what deployment, sandbox, agent and integration
// names match.
func DeploymentNamePattern() *regexp.Regexp { return deploymentNamePattern() }

// UUIDPattern is what a deployment's uid matches.
func UUIDPattern() *regexp.Regexp { return uuidPattern() }

// EnvNamePattern is what an environment variable's name matches.
func EnvNamePattern() *regexp.Regexp { return envNamePattern() }

// Codes of a DeploymentIssue; the deployment parser reports them as they are.
const (
	IssueMissingField      = "missing_field"
	IssueInvalidValue      = "invalid_value"
	IssueInvalidCredential = "invalid_credential"
)

// DeploymentIssue is one problem a deployment type finds in its own values.
// Path is relative to the value checked ("run.port", "" for the value
// itself). Messages never contain a value that could be a secret.
type DeploymentIssue struct {
	Path    string
	Code    string
	Message string
}

type issues []DeploymentIssue

func (is *issues) add(path, code, format string, args ...any) {
	*is = append(*is, DeploymentIssue{Path: path, Code: code, Message: fmt.Sprintf(format, args...)})
}

// nest adds issues found below path.
func (is *issues) nest(path string, inner []DeploymentIssue) {
	for _, e := range inner {
		e.Path = JoinIssuePath(path, e.Path)
		*is = append(*is, e)
	}
}

// JoinIssuePath appends a relative issue path to a parent path.
func JoinIssuePath(parent, rel string) string {
	switch {
	case rel == "":
		return parent
	case parent == "":
		return rel
	case strings.HasPrefix(rel, "["):
		return parent + rel
	}
	return parent + "." + rel
}

// name checks a deployment, sandbox, agent or integration name.
func (is *issues) name(path, name string) {
	if !DeploymentNamePattern().MatchString(name) {
		is.add(path, IssueInvalidValue, "a name is 1 to 40 lowercase letters, digits and -, starting with a letter (%s)", DeploymentNamePattern())
	}
}

// ValidateName checks a deployment, sandbox, agent or integration name.
func ValidateName(name string) []DeploymentIssue {
	var is issues
	is.name("", name)
	return is
}

func (is *issues) argv(path string, argv []string) {
	switch {
	case len(argv) == 0:
		is.add(path, IssueMissingField, "%s is required: the program and its arguments", path)
	case argv[0] == "":
		is.add(path+"[0]", IssueInvalidValue, "the program name is empty")
	}
}

func (is *issues) env(path string, env map[string]string) {
	for _, k := range slices.Sorted(maps.Keys(env)) {
		if !EnvNamePattern().MatchString(k) {
			is.add(path+"["+strconv.Quote(k)+"]", IssueInvalidValue, "not an environment-variable name")
		}
	}
}

// url checks an http(s) URL: https, or plain http to a loopback host.
// Messages do not repeat the URL, which may carry a token.
func (is *issues) url(path, raw string) {
	u, err := url.Parse(raw)
	switch {
	case raw == "":
		is.add(path, IssueMissingField, "%s is required", path)
	case err != nil || u.Host == "" || u.Opaque != "":
		is.add(path, IssueInvalidValue, "not an absolute http or https URL")
	case u.User != nil:
		is.add(path, IssueInvalidCredential, "the URL carries user information; use a credential instead")
	case u.Scheme == "https":
	case u.Scheme == "http":
		if !loopbackHost(u.Hostname()) {
			is.add(path, IssueInvalidValue, "plain http is allowed only to a loopback host (localhost, 127.0.0.0/8, ::1); use https")
		}
	default:
		is.add(path, IssueInvalidValue, "the scheme must be http or https")
	}
}

func loopbackHost(h string) bool {
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}
