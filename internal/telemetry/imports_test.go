package telemetry

import (
	"github.com/fabric-runtime/fabric/internal/testsupport/livetest"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// heavyPrefixes are the OpenTelemetry SDK, its exporters and the gRPC and
// protobuf stack they pull in: only this package may import them, and
// the opt-in exporter package (otlp) the exporters; internal/testsupport/deptest
// keeps them out of the root SDK's transitive dependencies.
var heavyPrefixes = []string{
	"go.opentelemetry.io/otel/sdk",
	"go.opentelemetry.io/otel/exporters/",
	"go.opentelemetry.io/proto/",
	"google.golang.org/grpc",
	"google.golang.org/protobuf",
}

// exporterPackages may import the exporters (and gRPC under them);
// spanrecorder, test support that no shipped program links, the SDK's
// in-memory exporter.
var exporterPackages = []string{"github.com/fabric-runtime/fabric/otlp", "github.com/fabric-runtime/fabric/otlp/otlpgrpc", "github.com/fabric-runtime/fabric/internal/testsupport/spanrecorder"}

// TestOnlyTelemetryImportsTheSDK keeps the SDK out of every other package
// of the module (tests included); the API (otel, otel/trace, otel/metric)
// is allowed.
func TestOnlyTelemetryImportsTheSDK(t *testing.T) {
	livetest.Short(t, "the go command (it runs go list over the module)")
	goTool, err := exec.LookPath("go")
	if err != nil {
		livetest.Missing(t, "the go command", "it runs go list over the module", err)
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(goTool, "list", "-e", "-f",
		`{{.ImportPath}} {{join .Imports " "}} {{join .TestImports " "}} {{join .XTestImports " "}}`, "./...")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	const self = "github.com/fabric-runtime/fabric/internal/telemetry"
	checked := 0
	for line := range strings.Lines(string(out)) {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		checked++
		if fields[0] == self || slices.Contains(exporterPackages, fields[0]) {
			continue
		}
		for _, imp := range fields[1:] {
			for _, p := range heavyPrefixes {
				if strings.HasPrefix(imp, p) {
					t.Errorf("%s imports %s: only internal/telemetry (and the exporter packages otlp, otlp/otlpgrpc) may import the OpenTelemetry SDK, exporters and gRPC", fields[0], imp)
				}
			}
		}
	}
	if checked < 5 {
		t.Fatalf("go list listed only %d packages", checked)
	}
}
