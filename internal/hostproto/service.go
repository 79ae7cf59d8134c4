package hostproto

import "github.com/fabric-runtime/fabric/contract"

// Service methods (v2 only). A service host runs one long-lived adapter
// service, or one attachment to a service the caller runs, instead of a
// runtime: it is started with one of these methods instead of start,
// answers health, refuses invoke, and ends after stop, whose runtime_id is
// the service id.
const (
	// MethodServiceStart starts a Fabric-owned service in the host.
	MethodServiceStart = "service_start"
	// MethodServiceAttach attaches the host to a caller-owned service
	// named by a ServiceReference; stopping the host only detaches.
	MethodServiceAttach = "service_attach"
)

// EnvServiceID is set in the environment of a service host and of every
// runtime host bound to a service.
const EnvServiceID = "FABRIC_SERVICE_ID"

// ServiceStartParams are the params of service_start and service_attach.
type ServiceStartParams struct {
	ServiceID   string               `json:"service_id"`
	ServiceType string               `json:"service_type"`
	AgentName   string               `json:"agent_name"`
	BaseDir     string               `json:"base_dir"`
	Config      contract.AgentConfig `json:"config"`
	// Reference is the caller's reference (service_attach only). Its
	// connection holds non-secret fields and the names of environment
	// variables that hold credentials (keys ending in _env); the core puts
	// those variables in the host's environment.
	Reference *contract.ServiceReference `json:"reference,omitempty"`
}

// ServiceStartResult is the answer to service_start and service_attach.
type ServiceStartResult struct {
	// Connection is the sanitized connection summary: addresses, ports,
	// and credential references (the names of environment variables),
	// never a credential value.
	Connection map[string]any `json:"connection,omitempty"`
	// Metadata is adapter-reported (version, readiness).
	Metadata map[string]any `json:"metadata,omitempty"`
	// CredentialEnv maps environment variable names to secret values that
	// every runtime host bound to the service receives in its environment.
	// This channel is private: the core never writes these values into a
	// document or a log, and scrubs them from diagnostics.
	CredentialEnv map[string]string `json:"credential_env,omitempty"`
}

// ServiceBinding tells a runtime host which service it is bound to
// (StartParams.Service). Credentials are not in it: they arrive as the
// environment variables Connection names.
type ServiceBinding struct {
	ServiceID   string         `json:"service_id"`
	AdapterID   string         `json:"adapter_id"`
	ServiceType string         `json:"service_type"`
	Ownership   string         `json:"ownership"`
	Connection  map[string]any `json:"connection,omitempty"`
	Metadata    map[string]any `json:"metadata,omitempty"`
}
