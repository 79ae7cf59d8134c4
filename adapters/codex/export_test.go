package codex

// What the external tests (package codex_test) use of the package's
// unexported names. They stay external because they start runtimes
// through harnesstest and adapters/bundled, which import this package.
const EnvBinary = envBinary

var (
	Args          = serverArgs
	Env           = serverEnv
	ParseSettings = parseSettings
	ResolveBinary = resolveBinary
	SelectModel   = selectModel
	ThreadParams  = threadParams
	TurnParams    = turnParams
)
