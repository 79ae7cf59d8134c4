package contract

// Doctor statuses.
const (
	DoctorPass = "pass"
	DoctorWarn = "warn"
	DoctorFail = "fail"
)

// DoctorReport is the result of preflight diagnosis. Findings never throw:
// every problem is a failed check.
type DoctorReport struct {
	AgentName string        `json:"agent_name"`
	AdapterID string        `json:"adapter_id,omitempty"`
	Status    string        `json:"status" jsonschema:"enum=pass,enum=warn,enum=fail"`
	Checks    []DoctorCheck `json:"checks"`
}

// DoctorCheck is one preflight check.
type DoctorCheck struct {
	Name     string         `json:"name"`
	Status   string         `json:"status" jsonschema:"enum=pass,enum=warn,enum=fail"`
	Message  string         `json:"message"`
	Metadata map[string]any `json:"metadata,omitempty"`
}
