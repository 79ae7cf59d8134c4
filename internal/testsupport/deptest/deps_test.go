package deptest

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/fabric-runtime/fabric/internal/testsupport/livetest"
)

// knownInitWork is init work in packages the commands link that is known
// and owned by other work in progress; remove an entry once it is lazy.
var knownInitWork = map[string]string{}

// commands are the programs whose start is budgeted (DESIGN.md section 5):
// a host start to ready, a command that needs no schema.
var commands = []struct {
	pkg  string
	args []string
}{
	{Module + "/cmd/fabric-host", nil},
	{Module + "/cmd/fabric", []string{"--help"}},
	{Module + "/cmd/fabric-core", []string{"--help"}},
	{Module + "/cmd/fabric-agent-ctl", []string{"--help"}},
	{Module + "/cmd/fabric-agent-ctl-serve", []string{"--help"}},
	{Module + "/cmd/fabric-serve", []string{"--help"}},
}

// No package linked into a command does work at init that a process not
// using it would pay for at every start (most commands need no schema).
func TestInitWork(t *testing.T) {
	livetest.Short(t, "the Go toolchain, to build fabric-host, fabric, fabric-core, fabric-agent-ctl, fabric-agent-ctl-serve and fabric-serve")
	for _, c := range commands {
		t.Run(c.pkg[len(Module)+1:], func(t *testing.T) {
			bin := Build(t, c.pkg)
			InitWork(t, knownInitWork, bin, nil, c.args...)
		})
	}
}

// testSupport is what no shipped program links: test frameworks and this
// module's test-support packages.
var testSupport = map[string]string{
	"testing":                         "the test framework",
	"github.com/rogpeppe/go-internal": "testscript",
	"github.com/google/go-cmp":        "a test comparison library",
	"github.com/stretchr/testify":     "a test assertion library",
	Module + "/conformance":           "the conformance suite",
	Module + "/modelstub":             "the scripted model endpoint",
	Module + "/internal/testsupport":  "test support (every package of the folder)",
	Module + "/bench":                 "benchmark mains",

	Module + "/adapterkit/adaptertest": "the live-test rig (public, for adapters' own tests)",
}

// testExporters are the OTel SDK's exporters for tests, which no shipped
// program links, cmd/fabric-core included (it links the conformance suite, not
// these): tests record spans with internal/testsupport/spanrecorder.
var testExporters = map[string]string{
	"go.opentelemetry.io/otel/sdk/trace/tracetest": "the OTel SDK's in-memory span exporter (tests: internal/testsupport/spanrecorder)",
}

// hostBad is what an adapter host, and the kit it is built from, must not
// link: it starts for every runtime, so everything it links it pays for
// in start time and memory.
var hostBad = merge(testSupport, testExporters, generation, map[string]string{
	"github.com/santhosh-tekuri/jsonschema": "JSON Schema compilation",
	"github.com/kaptinlin/jsonschema":       "JSON Schema compilation",
	Module + "/contract/validate":           "JSON Schema compilation",
	Module + "/schemas":                     "the embedded schemas (for the validator)",
	"go.yaml.in/yaml":                       "YAML",
	"go.opentelemetry.io/otel/exporters":    "OTel exporters",
	"go.opentelemetry.io/proto":             "the OTLP protobuf messages",
	"go.opentelemetry.io/otel/sdk":          "the OTel SDK",
	"google.golang.org/grpc":                "gRPC",
	"google.golang.org/protobuf":            "protobuf",
	"github.com/spf13/cobra":                "a CLI framework",
	Module + "/internal/config":             "config loading (the core's)",
	Module + "/internal/catalog":            "descriptor discovery (the core's)",
	Module + "/internal/plan":               "planning (the core's)",
	Module + "/internal/runtime":            "the runtime (the core's)",
	Module + "/internal/host":               "the core's end of the host protocol",
	Module + "/internal/telemetry":          "the core's telemetry",
	Module + "/internal/relay":              "the core's Relay sink",
	Module + "/internal/cli":                "the fabric CLI",
	Module + "/internal/agentctl":           "the fabric-agent-ctl CLI",
	Module + "/internal/deploy":             "deployment",
	"expvar":                                "published variables (registers handlers and variables at init)",
	"net/http/pprof":                        "profiling handlers (registered at init)",
	"modernc.org/sqlite":                    "the deployment side's SQLite",
	"go.temporal.io":                        "the scale-out side's Temporal SDK",
})

// hostPending is what the host still links and must not, each waiting on
// a move this guard cannot make alone: when one is no longer linked, the
// test fails until it is moved into hostBad, so it stays out.
var hostPending = map[string]string{}

// agentCtlServeBad is what fabric-agent-ctl-serve must not link: it
// carries the runtime and the bundled adapters, but nothing for tests or
// for the fabric CLI's own verbs.
var agentCtlServeBad = merge(testSupport, testExporters, slowInit, generation, grpc, protobuf, map[string]string{
	Module + "/internal/cli": "the fabric CLI's command tree",
})

// agentCtlBad is what fabric-agent-ctl must not link: platforms exec it
// for every health probe, and Go runs the init of every package a program
// links in every process, so it is a client of serve and nothing more.
// serve's body is fabric-agent-ctl-serve, which serve execs.
var agentCtlBad = merge(agentCtlServeBad, map[string]string{
	Module + "$":                            "the SDK's root package (serve's, in fabric-agent-ctl-serve)",
	Module + "/internal/runtime":            "the runtime core (serve's)",
	Module + "/internal/host":               "the core's end of the host protocol (serve's)",
	Module + "/internal/hostproto":          "the host protocol (serve's)",
	Module + "/adapters":                    "the bundled adapters (serve's)",
	Module + "/adapterkit":                  "the adapter-author kit (serve's)",
	Module + "/internal/agentctl/server":    "serve's server",
	Module + "/internal/agentctl/servecmd":  "serve's body",
	Module + "/internal/config":             "config loading (serve reads the configs)",
	Module + "/contract/validate":           "JSON Schema compilation",
	Module + "/schemas":                     "the embedded schemas",
	"github.com/kaptinlin/jsonschema":       "JSON Schema compilation",
	"github.com/santhosh-tekuri/jsonschema": "JSON Schema compilation",
	"go.yaml.in/yaml":                       "YAML (serve reads the configs)",
	"github.com/goccy/go-yaml":              "YAML",
	"go.opentelemetry.io":                   "OpenTelemetry, SDK and API (serve's telemetry)",
	"net/http":                              "HTTP (the client speaks to serve over a Unix socket)",
	"crypto/tls":                            "TLS",
	"modernc.org/sqlite":                    "the deployment side's SQLite",
})

// fabricServeBad is what fabric-serve must not link: it runs a
// deployment's supervisor, not tests.
var fabricServeBad = merge(testExporters, slowInit, generation, grpc, protobuf)

// fabricCoreBad is what fabric-core must not link: serve's body is
// fabric-serve, which serve execs, so that every other command (most of
// them short-lived, each its own process) pays no init and no start-up of
// the supervisor's dependencies. fabric-core links test support: it runs
// the conformance suite.
var fabricCoreBad = merge(fabricServeBad, map[string]string{
	Module + "/internal/supervisor":        "the deployment supervisor (serve's, in fabric-serve)",
	Module + "/internal/access":            "the access gateway (serve's)",
	Module + "/internal/console":           "the console (serve's)",
	Module + "/internal/agentctl/server":   "the runtime server the supervisor embeds (serve's)",
	Module + "/internal/agentctl/servecmd": "fabric-agent-ctl serve's body",
	"modernc.org/sqlite":                   "the access gateway's SQLite (serve's)",
})

// fabricBad is what fabric, the command line, must not link: it answers
// help, completion and usage errors from the command tree's definitions
// (internal/clifront) and hands every command that runs to fabric-core or
// fabric-serve, so that a shell's TAB, a help page or a mistyped command
// costs what a small cobra program costs (bench/cli).
var fabricBad = merge(fabricCoreBad, map[string]string{
	Module + "/internal/config":    "configs (fabric-core's)",
	Module + "/internal/plan":      "planning (fabric-core's)",
	Module + "/internal/telemetry": "telemetry (fabric-core's)",
	Module + "/internal/cli":       "the command tree and what its commands do (fabric-core's)",
	Module + "/internal/runtime":   "the runtime core (fabric-core's)",
	Module + "/adapters":           "the bundled adapters (fabric-core's)",
	Module + "/contract":           "the contract's types (fabric-core's)",
	"go.yaml.in/yaml":              "YAML (fabric-core's)",
	"github.com/goccy/go-yaml":     "YAML (the JSON Schema library's, fabric-core's)",
	"github.com/kaptinlin":         "JSON Schema (fabric-core's)",
	"go.opentelemetry.io":          "OpenTelemetry (fabric-core's)",
	"net/http":                     "HTTP (fabric-core's)",
	"crypto":                       "cryptography and TLS (fabric-core's)",
	"html/template":                "HTML templates (fabric-core's batch report)",
	"encoding/json":                "JSON (fabric-core's)",
})

// fabricCorePending is what fabric-core still links and must not: when one is no
// longer linked, the test fails until it is moved into fabricCoreBad.
var fabricCorePending = map[string]string{
	"html/template": "the console's templates are fabric-serve's; internal/batchreport (fabric batch report) still renders its page with it",
}

// slowInit is what no command may link because its own package init is
// expensive outside this module, where InitWork does not look: every
// process would pay it, most of them never using it.
var slowInit = map[string]string{
	"github.com/santhosh-tekuri/jsonschema": "a JSON Schema library that compiles every draft's meta-schema at init (~21k allocations)",
}

// grpc is OTLP over gRPC, opt-in (package otlp/otlpgrpc; Fabric's
// binaries with -tags otlpgrpc): gRPC's package init costs every process
// about a thousand allocations, and the default protocol is OTLP over
// HTTP.
var grpc = map[string]string{
	"google.golang.org/grpc":                                            "gRPC (OTLP over gRPC is opt-in: otlp/otlpgrpc, -tags otlpgrpc)",
	Module + "/otlp/otlpgrpc":                                           "OTLP over gRPC (opt-in: -tags otlpgrpc)",
	"go.opentelemetry.io/proto/otlp/collector":                          "the OTLP collector services (they link gRPC)",
	"github.com/grpc-ecosystem/grpc-gateway":                            "the gRPC gateway (linked by the OTLP collector services)",
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp":   "the upstream OTLP/HTTP trace exporter (links gRPC through the collector services; package otlp has its own client)",
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp": "the upstream OTLP/HTTP metric exporter (links gRPC through the collector services; package otlp has its own)",
}

// protobuf is the protobuf runtime and the types generated with it, which
// no shipped program links unless built with -tags otlpgrpc: every
// generated package registers its file descriptors at init, which cost
// each run of a CLI command about 1 ms of CPU (bench/cli) whether it
// exports telemetry or not. Package otlp writes OTLP by hand.
var protobuf = map[string]string{
	"google.golang.org/protobuf":                        "protobuf (generated types register their descriptors at init; package otlp writes OTLP by hand)",
	"go.opentelemetry.io/proto":                         "OTLP's generated protobuf types (package otlp writes OTLP by hand)",
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace": "the upstream OTLP trace exporter and its transform (to OTLP's generated types)",
}

// generation is JSON Schema generation, which no shipped program needs:
// the programs that validate read the committed schemas (package
// schemas), and internal/schemagen writes them in tests.
var generation = map[string]string{
	Module + "/internal/schemagen":  "JSON Schema generation (tests only; programs read package schemas)",
	"github.com/invopop/jsonschema": "JSON Schema generation",
	"github.com/pb33f/ordered-map":  "invopop/jsonschema's ordered map",
	"go/parser":                     "a Go source parser (invopop/jsonschema reads Go comments)",
}

// sdkBad is what the root SDK must not link: a program that imports
// package fabric alone pays for no adapter and no exporter; the bundled
// adapters (fabric.WithBundledAdapters) and the OTLP exporters are opt-in
// packages that Fabric's binaries wire in.
var sdkBad = merge(testSupport, testExporters, slowInit, generation, map[string]string{
	Module + "/adapters":                 "the bundled adapters (opt in with fabric.WithBundledAdapters)",
	Module + "/otlp":                     "the OTLP exporters (opt in with fabric.WithOTLPExporters)",
	"go.opentelemetry.io/otel/exporters": "OTel exporters",
	"go.opentelemetry.io/proto":          "the OTLP protobuf messages",
	"google.golang.org/grpc":             "gRPC",
	"google.golang.org/protobuf":         "protobuf",
})

func merge(ms ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// TestDeps walks each program's transitive dependencies (go list -deps)
// and fails on anything it must not link.
func TestDeps(t *testing.T) {
	for _, c := range []struct {
		pkg          string
		bad, pending map[string]string
	}{
		{Module + "/cmd/fabric-host", hostBad, hostPending},
		{Module + "/adapterkit", merge(hostBad, map[string]string{Module + "/adapters": "the bundled adapters (the kit serves them, never the reverse)"}), hostPending},
		{Module + "/cmd/fabric-agent-ctl", agentCtlBad, nil},
		{Module + "/cmd/fabric-agent-ctl-serve", agentCtlServeBad, nil},
		{Module, sdkBad, nil},
		{Module + "/otlp", merge(testSupport, grpc, protobuf), nil},
		{Module + "/cmd/fabric", fabricBad, nil},
		{Module + "/cmd/fabric-core", fabricCoreBad, fabricCorePending},
		{Module + "/cmd/fabric-serve", fabricServeBad, nil},
	} {
		name := strings.TrimPrefix(c.pkg, Module+"/")
		if c.pkg == Module {
			name = "sdk"
		}
		t.Run(name, func(t *testing.T) {
			deps := BadDeps(t, c.pkg, c.bad)
			for prefix, why := range c.pending {
				if !links(deps, prefix) {
					t.Errorf("%s no longer links %s (%s): move it from pending to the banned set so it stays out", c.pkg, prefix, why)
				}
			}
		})
	}
}

func links(deps map[string]string, prefix string) bool {
	for dep := range deps {
		if dep == prefix || strings.HasPrefix(dep, prefix+"/") {
			return true
		}
	}
	return false
}

// staticCgo is every package with cgo files a program built with
// CGO_ENABLED=0 may link: the host (cmd/fabric-host), the two CLIs
// (cmd/fabric, cmd/fabric-agent-ctl), fabric's commands (cmd/fabric-core)
// and the serve programs (cmd/fabric-serve, cmd/fabric-agent-ctl-serve) are built so, which works and
// changes nothing only while the users of cgo are net's resolver (Go's own
// is preferred on Linux) and os/user (the CLIs: archive/tar's and the
// OTel resource's user names, read from /etc/passwd and /etc/group
// instead of through libc).
var staticCgo = map[string]map[string]bool{
	Module + "/cmd/fabric-host":            {"net": true, "runtime/cgo": true},
	Module + "/adapterkit":                 {"net": true, "runtime/cgo": true},
	Module + "/cmd/fabric":                 {"net": true, "runtime/cgo": true},
	Module + "/cmd/fabric-core":            {"net": true, "os/user": true, "runtime/cgo": true},
	Module + "/cmd/fabric-agent-ctl":       {"net": true, "runtime/cgo": true},
	Module + "/cmd/fabric-agent-ctl-serve": {"net": true, "os/user": true, "runtime/cgo": true},
	Module + "/cmd/fabric-serve":           {"net": true, "os/user": true, "runtime/cgo": true},
}

func TestStaticCgo(t *testing.T) {
	for pkg, allowed := range staticCgo {
		out, err := exec.Command("go", "list", "-deps", "-f", "{{if .CgoFiles}}{{.ImportPath}}{{end}}", pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		for _, dep := range strings.Fields(string(out)) {
			if !allowed[dep] {
				t.Errorf("%s links %s, which uses cgo: it is built with CGO_ENABLED=0 (its package comment says why)", pkg, dep)
			}
		}
	}
}
