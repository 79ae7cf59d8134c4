package supervisorproto

import "github.com/fabric-runtime/fabric/contract"

// Revocation policies a revoke request carries (a catalog entry's
// revocation.running, minus continue, which asks for nothing).
const (
	PolicyDrain = "drain" // no new turn; the turns in flight finish; then the runtime stops
	PolicyStop  = "stop"  // the runtime stops now; turns in flight end cancelled
)

// Agent states of a revoked agent (besides StateStopped, the end of a
// stop).
const (
	StateDraining = "draining" // takes no new turn; waits for the turns in flight
	StateDrained  = "drained"  // its turns finished and its runtime stopped; never restarted
)

// ReasonPackageRevoked is the state reason of a revoked agent.
const ReasonPackageRevoked = "package_revoked"

// RevokePayload is the payload of a revoke request.
type RevokePayload struct {
	Agent  string `json:"agent"`
	Policy string `json:"policy"`
	// CatalogSerial and Entry name the catalog decision; Reason says why.
	CatalogSerial int64  `json:"catalog_serial"`
	Entry         string `json:"entry"`
	Reason        string `json:"reason"`
}

// Revocation is a revocation applied to an agent: what status shows and
// the journal keeps. It holds for the agent's definition (Generation) it
// was applied to; an apply that changes the agent lifts it.
type Revocation struct {
	Policy        string `json:"policy"`
	CatalogSerial int64  `json:"catalog_serial"`
	Entry         string `json:"entry"`
	Reason        string `json:"reason"`
	AtMillis      int64  `json:"at_millis"`
	// CompletedAtMillis is when the runtime was gone (0 while draining).
	CompletedAtMillis int64  `json:"completed_at_millis,omitempty"`
	Generation        string `json:"generation"`
	// Package is the selection the retired runtime ran under.
	Package *contract.PackageSelection `json:"package,omitempty"`
}

// RevokeResult is the answer to revoke.
type RevokeResult struct {
	Agent string `json:"agent"`
	// Outcome is drained, stopped, or draining when turns were still in
	// flight at the request's timeout (the drain goes on).
	Outcome string `json:"outcome"`
	// Already: the agent was retired by an earlier request; nothing new
	// happened.
	Already    bool        `json:"already"`
	Revocation *Revocation `json:"revocation"`
	// RuntimeID is the runtime the revocation stopped.
	RuntimeID string `json:"runtime_id,omitempty"`
}
