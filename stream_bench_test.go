package fabric_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/fabric-runtime/fabric/contract"
)

// BenchmarkInvokeStreamEvents measures adapter events delivered per second
// end to end (scripted host → wire → stream log → consumer), 100,000
// events per turn, and reports the window's peak bytes.
func BenchmarkInvokeStreamEvents(b *testing.B) {
	const n = 100_000
	rt := startScripted(&testing.T{}, `{response: "`+strings.Repeat("x", n)+`", events: 100000}`)
	defer rt.Stop(context.Background())
	ctx := context.Background()
	var total int
	var elapsed time.Duration
	var peak int64
	for b.Loop() {
		start := time.Now()
		s, err := rt.InvokeStream(ctx, contract.RunRequest{Input: "go"})
		if err != nil {
			b.Fatal(err)
		}
		for _, err := range s.Records(ctx) {
			if err != nil {
				b.Fatal(err)
			}
			total++
		}
		res, _ := s.Result(ctx)
		elapsed += time.Since(start)
		if st := streamStats(&testing.T{}, res); st.PeakBytes > peak {
			peak = st.PeakBytes
		}
	}
	b.ReportMetric(float64(total)/elapsed.Seconds(), "events/s")
	b.ReportMetric(float64(peak), "peak-window-bytes")
}
