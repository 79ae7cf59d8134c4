package bundled

import (
	"context"
	"fmt"
	"iter"
	"os"

	"github.com/fabric-runtime/fabric/adapterkit"
	"github.com/fabric-runtime/fabric/adapters/acp"
	"github.com/fabric-runtime/fabric/adapters/claude"
	"github.com/fabric-runtime/fabric/adapters/codex"
	"github.com/fabric-runtime/fabric/adapters/nodelib"
	"github.com/fabric-runtime/fabric/adapters/openclaw"
	"github.com/fabric-runtime/fabric/adapters/opencode"
	"github.com/fabric-runtime/fabric/adapters/pi"
	"github.com/fabric-runtime/fabric/adapters/scripted"
	"github.com/fabric-runtime/fabric/proc"
)

// Descriptor is one embedded descriptor document.
type Descriptor struct {
	Name string // file name
	Data []byte
}

// Descriptors returns every bundled descriptor, in a fixed order.
func Descriptors() []Descriptor {
	ds := []Descriptor{
		{Name: "scripted.fabric-adapter.json", Data: scripted.Descriptor()},
		{Name: "scripted-v1.fabric-adapter.json", Data: scripted.DescriptorV1()},
		{Name: "claude.fabric-adapter.json", Data: claude.Descriptor()},
		{Name: "codex.fabric-adapter.json", Data: codex.Descriptor()},
		{Name: "openclaw.fabric-adapter.json", Data: openclaw.Descriptor()},
		{Name: "opencode.fabric-adapter.json", Data: opencode.Descriptor()},
		{Name: "pi.fabric-adapter.json", Data: pi.Descriptor()},
	}
	for _, d := range acp.Descriptors() {
		ds = append(ds, Descriptor{Name: d.Name, Data: d.Data})
	}
	// Library harnesses with Node hosts (no Go adapter to look up).
	for _, d := range nodelib.Descriptors() {
		ds = append(ds, Descriptor{Name: d.Name, Data: d.Data})
	}
	return ds
}

// Lookup returns the bundled adapter with the given builtin name.
func Lookup(name string) (adapterkit.Adapter, bool) {
	switch name {
	case scripted.ID:
		return scripted.New(), true
	case claude.ID:
		return claude.New(), true
	case codex.ID:
		return codex.New(), true
	case openclaw.ID:
		return openclaw.New(), true
	case opencode.ID:
		return opencode.New(), true
	case acp.ID:
		return acp.New(), true
	case pi.ID:
		return pi.New(), true
	}
	return nil, false
}

// Serve hosts the named bundled adapter on the protocol the core selected
// and returns the process exit code.
func Serve(ctx context.Context, name string) int {
	a, ok := Lookup(name)
	if !ok {
		fmt.Fprintf(os.Stderr, "fabric: no bundled adapter %q\n", name)
		return 2
	}
	if err := adapterkit.Serve(ctx, a); err != nil {
		fmt.Fprintf(os.Stderr, "fabric: adapter host %s: %v\n", name, err)
		return 1
	}
	return 0
}

// Set is every bundled adapter, as an SDK client opts into them:
//
//	client := fabric.New(fabric.WithBundledAdapters(bundled.Adapters()))
//
// A program that is its own host binary (fabric.WithHostBinary's default)
// also calls ServeHost first thing in main.
type Set struct{}

// Adapters returns the set of every bundled adapter.
func Adapters() Set { return Set{} }

// Descriptors yields each bundled descriptor document by file name, in
// the fixed order of the package function Descriptors.
func (Set) Descriptors() iter.Seq2[string, []byte] {
	return func(yield func(string, []byte) bool) {
		for _, d := range Descriptors() {
			if !yield(d.Name, d.Data) {
				return
			}
		}
	}
}

// EnvAdapter tells a re-executed host binary which bundled adapter to
// serve (the core sets it from the descriptor's runner.builtin).
const EnvAdapter = adapterkit.EnvBundledAdapter

// ServeHost runs this process as the host of a bundled adapter when
// Fabric re-executed it for that purpose, and reports whether it did. The
// host is the subreaper of everything its adapter starts
// (proc.RunAsSubreaper): what the harness orphans is adopted by the host
// and killed when it exits. Call it first thing in main of a program that
// is the host binary of its own runtimes:
//
//	if served, code := bundled.ServeHost(); served {
//		os.Exit(code)
//	}
func ServeHost() (served bool, exitCode int) {
	name := os.Getenv(EnvAdapter)
	if name == "" {
		return false, 0
	}
	return true, proc.RunAsSubreaper(func() int { return Serve(context.Background(), name) })
}
