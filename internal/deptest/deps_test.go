package deptest

import "testing"

// knownInitWork is init work in packages the commands link that is known
// and owned by other work in progress; remove an entry once it is lazy.
var knownInitWork = map[string]string{
	Module + "/contract": "contract/deployment.go compiles DeploymentNamePattern, uuidPattern and envNamePattern at init",
	// The metaschema compile (21,000 allocations) is lazy in the fork;
	// upstream's package maps (formats, decoders, drafts) remain.
	Module + "/internal/tempfork/jsonschema": "upstream's package-level maps of formats, decoders and drafts",
}

// commands are the programs whose start is budgeted (DESIGN.md section 5):
// a host start to ready, a command that needs no schema.
var commands = []struct {
	pkg  string
	args []string
}{
	{Module + "/cmd/fabric-host", nil},
	{Module + "/cmd/fabric", []string{"--help"}},
	{Module + "/cmd/fabric-agent-ctl", []string{"--help"}},
}

// No package linked into a command does work at init that a process not
// using it would pay for at every start (most commands need no schema).
func TestInitWork(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the commands")
	}
	for _, c := range commands {
		t.Run(c.pkg[len(Module)+1:], func(t *testing.T) {
			InitWork(t, knownInitWork, Build(t, c.pkg), nil, c.args...)
		})
	}
}
