package agentctl

import "github.com/fabric-runtime/fabric/contract"

// StatusSchemaVersion is the version of the status document.
const StatusSchemaVersion = "fabric.agent-ctl.status/v1alpha1"

// MarkerSchemaVersion is the version of the fabric.unclean marker file.
const MarkerSchemaVersion = "fabric.unclean/v1alpha1"

// MarkerFile is the name of the unclean-shutdown marker, beside the socket.
const MarkerFile = "fabric.unclean"

// Server states.
const (
	ServerServing  = "serving"
	ServerStopping = "stopping"
)

// Runtime activities in status (contract.Activity* values).
const (
	ActivityIdle     = contract.ActivityIdle
	ActivityBusy     = contract.ActivityBusy
	ActivityStopping = contract.ActivityStopping
)

// What a marker entry says could not be confirmed.
const (
	// UncleanStopFailed: stop returned an error (for example
	// host_termination_failed): the host's process group was not seen gone.
	UncleanStopFailed = "stop_failed"
	// UncleanStopTimedOut: serve's shutdown budget ran out before the
	// runtime's stop returned.
	UncleanStopTimedOut = "stop_timed_out"
	// UncleanServeExited: a serve ended (killed, crashed) while it owned
	// the runtime, so nothing stopped it; found by the next serve in its
	// runtime journal.
	UncleanServeExited = "serve_exited_without_cleanup"
)

// Origins of an unclean entry in status.
const (
	OriginPrevious = "previous_serve" // read from the marker or journal at startup
	OriginThis     = "this_serve"     // a stop this serve could not confirm
)

// Status is the answer to status: the server and the runtimes it owns
// (filtered by agent and runtime id), and what is known of cleanups that
// could not be confirmed.
type Status struct {
	SchemaVersion string          `json:"schema_version"`
	Server        ServerStatus    `json:"server"`
	Runtimes      []RuntimeStatus `json:"runtimes"`
	// Unclean is present when a previous serve left a fabric.unclean
	// marker (or died without cleanup) or a stop of this serve could not
	// be confirmed.
	Unclean *UncleanStatus `json:"unclean,omitempty"`
}

// ServerStatus describes the serve process.
type ServerStatus struct {
	State           string `json:"state"`
	Pid             int    `json:"pid"`
	Socket          string `json:"socket"`
	StartedAtMillis int64  `json:"started_at_millis"`
	Runtimes        int    `json:"runtimes"` // all runtimes, before filtering
}

// RuntimeStatus is a RuntimeHandle (its fields inline, status included)
// plus what serve knows of the runtime.
type RuntimeStatus struct {
	contract.RuntimeHandle
	HostPid         int    `json:"host_pid"`
	Activity        string `json:"activity"`
	StartedAtMillis int64  `json:"started_at_millis"`
	Invocations     int64  `json:"invocations"`
	Config          string `json:"config"`
}

// UncleanStatus reports unconfirmed cleanups.
type UncleanStatus struct {
	Marker string `json:"marker"` // path of fabric.unclean
	// Found is the marker (or runtime journal) a previous serve left, as
	// read at startup; absent when only this serve has entries.
	Found *Marker `json:"found,omitempty"`
	// Runtimes are every entry with what is known of it now.
	Runtimes []UncleanEntry `json:"runtimes"`
	// Cleared is true once every entry is confirmed and the marker file
	// is removed.
	Cleared         bool  `json:"cleared"`
	ClearedAtMillis int64 `json:"cleared_at_millis,omitempty"`
}

// UncleanEntry is one marker entry and its confirmation.
type UncleanEntry struct {
	UncleanRuntime
	Origin    string `json:"origin"`
	Confirmed bool   `json:"confirmed"`
	// Confirmation says how cleanup was confirmed (gone, pid_reused,
	// rebooted, killed) or, while unconfirmed, why not.
	Confirmation      string `json:"confirmation,omitempty"`
	ConfirmedAtMillis int64  `json:"confirmed_at_millis,omitempty"`
}

// Marker is the fabric.unclean file: runtimes whose cleanup a serve could
// not confirm. It is written atomically with mode 0600.
type Marker struct {
	SchemaVersion   string           `json:"schema_version"`
	WrittenAt       string           `json:"written_at"` // RFC 3339, UTC
	WrittenAtMillis int64            `json:"written_at_millis"`
	ServePid        int              `json:"serve_pid"`
	Socket          string           `json:"socket"`
	BootID          string           `json:"boot_id,omitempty"`
	Runtimes        []UncleanRuntime `json:"runtimes"`
}

// UncleanRuntime is one runtime whose cleanup was not confirmed.
type UncleanRuntime struct {
	RuntimeID string `json:"runtime_id"`
	Agent     string `json:"agent"`
	// HostPid is the adapter host's pid, also its process group id;
	// HostStartTicks its start time (field 22 of /proc/PID/stat) so that a
	// reused pid is never mistaken for it.
	HostPid          int    `json:"host_pid"`
	HostStartTicks   uint64 `json:"host_start_ticks,omitempty"`
	What             string `json:"what"`
	Detail           string `json:"detail,omitempty"`
	RecordedAtMillis int64  `json:"recorded_at_millis"`
}
