package batchreport

import (
	"strings"
	"testing"

	"github.com/fabric-runtime/fabric/contract"
)

func TestTimeline(t *testing.T) {
	rec := func(id, cfg string, queued, start, end int64, attempts int) contract.BatchTrial {
		return contract.BatchTrial{TrialID: id, Task: id, Config: cfg, Outcome: contract.TrialPassed, Attempts: attempts,
			Timings: contract.TrialTimings{QueuedMillis: queued, StartedMillis: start, EndedMillis: end, DurationSeconds: float64(end-start) / 1000, SetupSeconds: 1, RunSeconds: 2}}
	}
	retried := rec("c", "a", 1000, 5000, 9000, 2)
	retried.History = []contract.AttemptNote{{Attempt: 1, Outcome: contract.TrialErrored, Error: &contract.TrialError{Class: "model", Code: "rate_limited", RetryAfterSeconds: 3}}}
	in := Input{Spec: contract.BatchSpec{Configs: []contract.BatchConfig{{ID: "a"}, {ID: "b"}}}, Trials: []contract.BatchTrial{
		rec("a", "a", 0, 1000, 4000, 1),
		rec("b", "b", 900, 1000, 3000, 1),
		rec("d", "b", 3000, 3000, 4000, 1), // takes b's slot as it ends
		retried,
		{TrialID: "s", Task: "s", Config: "a", Outcome: contract.TrialSkipped, Timings: contract.TrialTimings{QueuedMillis: 2000, EndedMillis: 2000}},
	}}
	m, err := newModel(in)
	if err != nil {
		t.Fatal(err)
	}
	sp := spans(m)
	if len(sp) != 4 {
		t.Fatalf("%d spans, want 4 (skipped left out)", len(sp))
	}
	_, _, peak := inFlight(sp)
	lanes := 0
	for _, s := range sp {
		lanes = max(lanes, s.lane+1)
	}
	// b (0.9-3 s), a and c (1-4 s, 1-9 s) overlap; d starts as b ends.
	if peak != 3 || lanes != 3 {
		t.Errorf("peak %d, lanes %d; want 3, 3", peak, lanes)
	}
	rows := timelineTable(m, sp)
	if len(rows) != 3 || rows[2].Config != "all" || rows[2].Peak != 3 {
		t.Fatalf("rows %+v", rows)
	}
	if a := rows[0]; a.Retried != 1 || a.RateLimited != 1 || a.LongWait != "4 s" || a.FirstStart != "+0.1 s" || a.LastEnd != "+8.1 s" {
		t.Errorf("config a: %+v", a)
	}
	if b := rows[1]; b.Peak != 1 || b.MedianWait != "0.05 s" && b.MedianWait != "0.1 s" {
		t.Errorf("config b: %+v", b)
	}
	svg := timelineChart(m, sp)
	for _, want := range []string{"stroke-dasharray", "attempt 1 error (model: rate_limited, retry after 3 s)", "in flight (peak 3)"} {
		if !strings.Contains(svg, want) {
			t.Errorf("timeline lacks %q", want)
		}
	}
	ph := phases(m)
	if ph[0].N != 2 || ph[0].Setup != 1 || ph[0].Run != 2 || ph[0].Other <= 0 {
		t.Errorf("phases of a: %+v", ph[0])
	}
}

func TestClock(t *testing.T) {
	for sec, want := range map[float64]string{0: "+0 s", 12.34: "+12.3 s", 599: "+599 s", 605: "+10:05", 3725: "+1:02:05"} {
		if got := clock(sec); got != want {
			t.Errorf("clock(%v) = %q, want %q", sec, got, want)
		}
	}
	for v, want := range map[float64]string{925: "925", 14250: "14.2k", 1.5e6: "1.5M"} {
		if got := fmtTokens(v); got != want {
			t.Errorf("fmtTokens(%v) = %q, want %q", v, got, want)
		}
	}
}

func TestTimelineChartGolden(t *testing.T) {
	m, err := newModel(fixture())
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "timeline.svg.golden", []byte(timelineChart(m, spans(m))+"\n"))
}
