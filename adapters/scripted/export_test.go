package scripted

// Names the external tests check the adapter's behaviour against.
const (
	EventKind        = eventKind
	EventToolCall    = eventToolCall
	EventToolResult  = eventToolResult
	ShellTool        = shellTool
	SlowStreamEvents = slowStreamEvents
	ServiceType      = serviceType
	ServiceTokenEnv  = serviceTokenEnv
	ConnURL          = connURL
	ConnTokenEnv     = connTokenEnv
)
