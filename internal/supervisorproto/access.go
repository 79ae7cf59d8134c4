package supervisorproto

import "time"

// Access operations of an AccessPayload.
const (
	AccessGrant     = "grant"
	AccessList      = "list"
	AccessRevoke    = "revoke"
	AccessRotate    = "rotate"
	AccessReconcile = "reconcile"
)

// AccessPayload is the payload of an access request.
type AccessPayload struct {
	Op string `json:"op"`
	// Integration is the gateway's binding id (integration/<name>, ...).
	Integration string  `json:"integration"`
	Agent       string  `json:"agent,omitempty"`
	Client      string  `json:"client,omitempty"`
	KeyID       string  `json:"key_id,omitempty"`
	TTLSeconds  float64 `json:"ttl_seconds,omitempty"`
	ResponseID  string  `json:"response_id,omitempty"`
	Outcome     string  `json:"outcome,omitempty"`
	Evidence    string  `json:"evidence,omitempty"`
}

// AccessKey describes a grant (never its secret).
type AccessKey struct {
	ID         string     `json:"key_id"`
	Client     string     `json:"client"`
	Agent      string     `json:"agent"`
	Generation string     `json:"generation"`
	CreatedAt  time.Time  `json:"created_at"`
	ExpiresAt  time.Time  `json:"expires_at"`
	RevokedAt  *time.Time `json:"revoked_at,omitempty"`
	State      string     `json:"state"` // active, expired, revoked, replaced
}

// AccessTurn is one live turn.
type AccessTurn struct {
	ResponseID string    `json:"response_id"`
	Agent      string    `json:"agent"`
	Client     string    `json:"client"`
	KeyID      string    `json:"key_id"`
	Status     string    `json:"status"`
	CreatedAt  time.Time `json:"created_at"`
}

// AccessStatus is what `fabric deploy status` shows of a gateway.
type AccessStatus struct {
	Name    string       `json:"name"`
	URL     string       `json:"url"`
	Agents  []string     `json:"agents"`
	Clients []string     `json:"clients"`
	Grants  []AccessKey  `json:"grants"`
	Turns   []AccessTurn `json:"live_turns"`
	StoreOK bool         `json:"store_ok"`
}
