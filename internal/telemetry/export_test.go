package telemetry

// The fixtures of the in-package tests, for the external tests that need
// the otlp package (which imports this one).
var (
	Handle     = handle
	Info       = info
	CodexTurn  = codexTurn
	U64        = u64
	EnvOf      = envOf
	FakeSecret = fakeSecret
)
