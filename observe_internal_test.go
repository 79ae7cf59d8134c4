package fabric

import (
	"testing"

	"github.com/fabric-runtime/fabric/otlp"
)

// WithOTLPExporters takes the root package's OTLPExporters; the client
// must still reach otlp.Exporters' building methods through it.
func TestWithOTLPExportersKeepsTheBuilder(t *testing.T) {
	c := New(WithOTLPExporters(otlp.Exporters{}))
	if _, ok := c.obs.exporters.(otlp.Exporters); !ok {
		t.Fatalf("exporters = %T, want otlp.Exporters", c.obs.exporters)
	}
	if c := New(WithOTLPExporters(nil)); c.obs.exporters != nil {
		t.Fatalf("nil OTLPExporters kept %T", c.obs.exporters)
	}
}
