package claude

// What the external tests (package claude_test) use of the package's
// unexported names. They stay external because they start runtimes
// through harnesstest and adapters/bundled, which import this package.
const (
	CancelWait       = cancelWait
	EnvBinary        = envBinary
	EventOutputDelta = eventOutputDelta
	EventStatus      = eventStatus
	EventToolCall    = eventToolCall
	EventToolResult  = eventToolResult
)

var NewDirs = newPrivateDirs
