//go:build linux

package openclaw_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/fabric-runtime/fabric/adapters/openclaw"
	"github.com/fabric-runtime/fabric/modelstub"
)

// BenchmarkLiveStart measures a runtime's start, from StartRuntime to a
// healthy Gateway (and, with the dashboard, its token written), with and
// without the dashboard interface, and reports the median. Each iteration
// starts and stops one real Gateway (20-60 s):
//
//	go test -run '^$' -bench LiveStart -benchtime 3x ./adapters/openclaw
func BenchmarkLiveStart(b *testing.B) {
	for _, dashboard := range []bool{false, true} {
		name := "plain"
		if dashboard {
			name = "dashboard"
		}
		b.Run(name, func(b *testing.B) {
			l := newLive(b, &modelstub.Script{})
			var times []time.Duration
			for b.Loop() {
				settings := map[string]any{}
				if dashboard {
					settings["interfaces"] = map[string]any{openclaw.Dashboard: map[string]any{"port": freeBase(b)}}
				}
				cfg := l.config(settings)
				t0 := time.Now()
				rt := l.start(cfg)
				times = append(times, time.Since(t0))
				if _, err := rt.Stop(context.Background()); err != nil {
					b.Fatal(err)
				}
			}
			slices.Sort(times)
			median := times[len(times)/2]
			if len(times)%2 == 0 {
				median = (times[len(times)/2-1] + times[len(times)/2]) / 2
			}
			b.ReportMetric(float64(median.Milliseconds()), "ms-median-start")
			b.ReportMetric(0, "ns/op")
			b.Logf("%s: starts %v, median %s", name, times, median.Round(time.Millisecond))
		})
	}
}
