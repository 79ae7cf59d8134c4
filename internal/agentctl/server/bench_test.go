package server

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	fabric "github.com/fabric-runtime/fabric"
	"github.com/fabric-runtime/fabric/adapters/bundled"
	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/agentctl"
)

func medianMicros(d []time.Duration) float64 {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return float64(s[len(s)/2].Nanoseconds()) / 1000
}

// BenchmarkCheckRoundTrip measures one check through serve, from the
// client's request to its decoded answer (connect, peer check, decode,
// check, encode), with the scripted adapter's host answering health.
// p50-us is the median of the iterations.
func BenchmarkCheckRoundTrip(b *testing.B) {
	ts := startServer(b, shortDir(b))
	h := ts.start(b, "bench", `{response: "ok"}`)
	c := &agentctl.Client{Socket: ts.socket}
	ctx := context.Background()
	for _, bc := range []struct {
		name string
		req  agentctl.Request
	}{
		{"server", agentctl.Request{Operation: agentctl.OpCheck}},
		{"runtime-live", agentctl.Request{Operation: agentctl.OpCheck, Agent: "bench", RuntimeID: h.RuntimeID, Level: contract.LevelLive}},
		{"runtime-ready", agentctl.Request{Operation: agentctl.OpCheck, Agent: "bench", RuntimeID: h.RuntimeID, Level: contract.LevelReady}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			lat := make([]time.Duration, 0, 1024)
			b.ReportAllocs()
			for b.Loop() {
				req := bc.req
				t0 := time.Now()
				resp, err := c.Do(ctx, &req)
				lat = append(lat, time.Since(t0))
				if err != nil || resp.Status != agentctl.StatusSucceeded {
					b.Fatal(resp, err)
				}
			}
			b.ReportMetric(medianMicros(lat), "p50-us")
		})
	}
}

// BenchmarkInvokeOverhead invokes the same scripted config (whose own work
// is negligible) alternately through the SDK directly and through serve,
// in one loop so both see the same machine, and reports each median and
// their ratio. The difference is serve's overhead per invoke: a Unix
// socket connection, the peer check, JSON of the request and of the
// RunResult both ways. Starting the fabric-agent-ctl process itself, which
// a platform pays per command, is not included.
func BenchmarkInvokeOverhead(b *testing.B) {
	dir := shortDir(b)
	ts := startServer(b, dir)
	cfg := writeConfig(b, dir, "bench", `{response: "ok"}`)
	resp := ts.do(b, &agentctl.Request{Operation: agentctl.OpStart, Agent: "bench", Config: cfg})
	if resp.Status != agentctl.StatusSucceeded {
		b.Fatal(resp.Error)
	}
	var h contract.RuntimeHandle
	if err := json.Unmarshal(resp.Output, &h); err != nil {
		b.Fatal(err)
	}
	client := fabric.New(fabric.WithBundledAdapters(bundled.Adapters()), fabric.WithStateDir(dir+"/sdk-hosts"))
	l, err := client.LoadConfig(cfg, fabric.LoadOptions{})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	rt, err := client.StartRuntime(ctx, l)
	if err != nil {
		b.Fatal(err)
	}
	defer rt.Stop(ctx)
	c := &agentctl.Client{Socket: ts.socket}
	var sdk, served []time.Duration
	for b.Loop() {
		t0 := time.Now()
		res, err := rt.Invoke(ctx, "benchmark input")
		sdk = append(sdk, time.Since(t0))
		if err != nil || res.Status != contract.StatusSucceeded {
			b.Fatal(res, err)
		}
		req := agentctl.Request{Operation: agentctl.OpInvoke, Agent: "bench", RuntimeID: h.RuntimeID, Request: &contract.RunRequest{Input: "benchmark input"}}
		t1 := time.Now()
		resp, err := c.Do(ctx, &req)
		served = append(served, time.Since(t1))
		if err != nil || resp.Status != agentctl.StatusSucceeded {
			b.Fatal(resp, err)
		}
	}
	s, v := medianMicros(sdk), medianMicros(served)
	b.ReportMetric(s, "sdk-p50-us")
	b.ReportMetric(v, "serve-p50-us")
	b.ReportMetric(v-s, "overhead-us")
	if s > 0 {
		b.ReportMetric(v/s, "serve/sdk")
	}
}
