package supervisorproto

import "github.com/fabric-runtime/fabric/internal/deploy/desired"

// Files of the supervisor in its state directory (beside the control
// socket, the serve lock, the runtime journal and fabric.unclean).
const (
	// SocketFile is the control socket's default name.
	SocketFile = "supervisor.sock"
	// DesiredFile journals the desired state the supervisor was last
	// given (references only), so that a restarted supervisor brings the
	// deployment back.
	DesiredFile = "desired.json"
	// RevokedFile journals the revocations applied to the deployment's
	// agents, so that a restarted supervisor keeps them drained or
	// stopped.
	RevokedFile = "revoked.json"
	// LogDir holds the integration services' stdout and stderr.
	LogDir = "services"
)

// ConsoleListen is the console's address unless told otherwise (fabric
// serve --console-listen): loopback, a port chosen once and then kept.
const ConsoleListen = "127.0.0.1:0"

// Deploy actions (agentctl.Request.Action of a deploy request).
const (
	ActionApply   = "apply"
	ActionStatus  = "status"
	ActionDestroy = "destroy"
	// ActionAccess manages an access gateway's keys (AccessPayload).
	ActionAccess = "access"
	// ActionRevoke retires one agent as a support-catalog revocation
	// says (fabric packages audit --apply): drain or stop (RevokePayload).
	ActionRevoke = "revoke"
)

// Error codes of deploy requests (agentctl.Error.Code).
const (
	CodeInvalidState       = "invalid_desired_state"   // the payload is not a desired state this supervisor takes
	CodeOtherDeployment    = "deployment_uid_mismatch" // the supervisor serves a deployment with another uid
	CodeUnsupportedFormat  = "unsupported_format"      // a journal or payload of another format version
	CodeCredentialRequired = "credential_required"     // a referenced credential has no value
	CodePortTaken          = "port_taken"              // a service's port is held by a process the supervisor does not own
	// CodeNoSuchIntegration: the access request names no access gateway
	// of the deployment.
	CodeNoSuchIntegration = "no_such_integration"
	// CodeAgentRevoked refuses a turn addressed to an agent that a
	// revocation drained or stopped (or is draining).
	CodeAgentRevoked = "agent_revoked"
)

// ApplyPayload is the payload of an apply request.
type ApplyPayload struct {
	State *desired.State `json:"state"`
	// Credentials are the values of the state's env references, keyed by
	// desired.Key ("env:NAME"). They are kept in memory only.
	Credentials map[string]string `json:"credentials,omitempty"`
}

// Change actions, as plan and apply report them.
const (
	ActionCreate  = "create"
	ActionUpdate  = "update"
	ActionReplace = "replace"
	ActionDelete  = "delete"
	ActionNoop    = "noop"
)

// Apply outcomes.
const (
	OutcomeSucceeded = "succeeded" // every agent running (and ready, unknown or unsupported), every service healthy
	OutcomeDegraded  = "degraded"  // something is not running; Recovery says what to do
)

// Change is one resource's reconciliation.
type Change struct {
	Resource string `json:"resource"`
	Action   string `json:"action"`
	Reason   string `json:"reason"`
}

// ApplyResult is what a reconcile achieved.
type ApplyResult struct {
	Outcome  string   `json:"outcome"`
	Changes  []Change `json:"changes"`
	Recovery []string `json:"recovery"`
	Status   Status   `json:"status"`
}

// DestroyResult is the answer to destroy.
type DestroyResult struct {
	Removed  []string `json:"removed"`
	Retained []string `json:"retained"`
	Failed   []string `json:"failed"`
}
