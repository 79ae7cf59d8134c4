package runtime

import (
	"context"
	"testing"
	"time"

	"github.com/fabric-runtime/fabric/contract"
)

// BenchmarkInvoke measures one invocation through the core with the
// scripted adapter, whose own work is negligible: the figure is Fabric's
// per-invoke overhead (both protocol ends, framing, normalization).
func BenchmarkInvoke(b *testing.B) {
	for _, pr := range protocols {
		for _, follow := range []bool{false, true} {
			name := pr.name
			if follow {
				// A supervisor's runtimes: every turn followable.
				name += "/followable"
			}
			b.Run(name, func(b *testing.B) { benchInvoke(b, pr.adapter, follow) })
		}
	}
}

func benchInvoke(b *testing.B, adapter string, follow bool) {
	opts := testOptions(b)
	opts.FollowTurns = follow
	rt, err := Start(context.Background(), testPlan(b, adapter, map[string]any{"response": "ok"}), opts)
	if err != nil {
		b.Fatal(err)
	}
	defer rt.Stop(context.Background())
	req := contract.RunRequest{Input: "benchmark input"}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		res, err := rt.Invoke(ctx, req, InvokeOptions{})
		if err != nil || res.Status != contract.StatusSucceeded {
			b.Fatal(res, err)
		}
	}
}

// BenchmarkStartToReady measures Start of a Go adapter host (process
// launch, protocol start, adapter start) until the runtime is active.
func BenchmarkStartToReady(b *testing.B) {
	for _, pr := range protocols {
		b.Run(pr.name, func(b *testing.B) {
			opts := testOptions(b)
			p := testPlan(b, pr.adapter, nil)
			ctx := context.Background()
			var total time.Duration
			for b.Loop() {
				begin := time.Now()
				rt, err := Start(ctx, p, opts)
				total += time.Since(begin)
				if err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				rt.Stop(ctx)
				b.StartTimer()
			}
			b.ReportMetric(float64(total.Microseconds())/float64(b.N)/1000, "start-ms")
		})
	}
}
