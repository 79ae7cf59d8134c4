package adapterkit

import (
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/fabric-runtime/fabric/contract"
)

func TestHarnessHealthCheck(t *testing.T) {
	// The ladder of a harness that must answer a handshake (active) and
	// keep taking input (ready), as the Claude Code and Pi adapters use it.
	ladder := func(exited, started, broken bool) []HealthRung {
		return []HealthRung{
			{Level: contract.LevelLive, Failed: exited, Reason: contract.ReasonAgentExited, Message: "exited"},
			{Level: contract.LevelActive, Failed: !started, Reason: contract.ReasonSessionClosed, Message: "no handshake"},
			{Level: contract.LevelReady, Failed: broken, Reason: contract.ReasonHealthFailed, Message: "broken"},
		}
	}
	tests := []struct {
		name                  string
		level                 string
		busy                  bool
		exited, started, brkn bool
		outcome, reason, msg  string
		activity              string
	}{
		{"live while running", contract.LevelLive, false, false, false, false, contract.OutcomePassed, "", "", contract.ActivityIdle},
		{"live, busy", contract.LevelLive, true, false, true, false, contract.OutcomePassed, "", "", contract.ActivityBusy},
		{"live after exit", contract.LevelLive, true, true, true, false, contract.OutcomeFailed, contract.ReasonAgentExited, "exited", contract.ActivityStopped},
		{"active before the handshake", contract.LevelActive, false, false, false, false, contract.OutcomeFailed, contract.ReasonSessionClosed, "no handshake", contract.ActivityIdle},
		{"active before the handshake, exited", contract.LevelActive, false, true, false, false, contract.OutcomeFailed, contract.ReasonAgentExited, "exited", contract.ActivityStopped},
		{"active, broken", contract.LevelActive, false, false, true, true, contract.OutcomePassed, "", "", contract.ActivityIdle},
		{"ready", contract.LevelReady, false, false, true, false, contract.OutcomePassed, "", "", contract.ActivityIdle},
		{"ready, broken", contract.LevelReady, false, false, true, true, contract.OutcomeFailed, contract.ReasonHealthFailed, "broken", contract.ActivityIdle},
		{"ready before the handshake", contract.LevelReady, false, false, false, true, contract.OutcomeFailed, contract.ReasonSessionClosed, "no handshake", contract.ActivityIdle},
		{"unknown level", "deep", false, false, false, false, contract.OutcomeUnsupported, contract.ReasonUnsupportedLevel, "", contract.ActivityIdle},
		{"unknown level, exited", "", false, true, false, false, contract.OutcomeUnsupported, contract.ReasonUnsupportedLevel, "", contract.ActivityStopped},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := time.Now().UnixMilli()
			h := HarnessHealth{Source: "harness", Busy: tt.busy, Exited: tt.exited, Metadata: map[string]any{"pid": 7},
				Rungs: ladder(tt.exited, tt.started, tt.brkn)}.Check(tt.level)
			if h.Outcome != tt.outcome || h.ReasonCode != tt.reason || h.Message != tt.msg || h.Activity != tt.activity {
				t.Errorf("Check(%q) = outcome %q reason %q message %q activity %q, want %q %q %q %q",
					tt.level, h.Outcome, h.ReasonCode, h.Message, h.Activity, tt.outcome, tt.reason, tt.msg, tt.activity)
			}
			if h.Source != "harness" || h.Metadata["pid"] != 7 || h.ObservedAtMillis < before {
				t.Errorf("source %q, metadata %v, observed at %d (before %d)", h.Source, h.Metadata, h.ObservedAtMillis, before)
			}
		})
	}
}

func TestHarnessStopBoundsTheReaderAfterClose(t *testing.T) {
	// A reader that does not end when its output is closed (an SDK
	// connection with work of its own) is waited for at most ClosedWait.
	never := make(chan struct{})
	start := time.Now()
	if err := (HarnessStop{OutputDone: never, ClosedWait: 100 * time.Millisecond}).Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < 100*time.Millisecond || took > time.Second {
		t.Errorf("Run took %v, want about 100ms", took)
	}
}

func TestLineWriter(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	lw := NewLineWriter(w, time.Second)
	if err := lw.Send(map[string]any{"type": "prompt", "id": "fabric-1"}); err != nil {
		t.Fatal(err)
	}
	if err := lw.Send(func() {}); err == nil {
		t.Error("Send of a value JSON cannot encode succeeded")
	}
	if err := lw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := lw.Send("late"); !errors.Is(err, os.ErrClosed) {
		t.Errorf("Send after Close = %v, want os.ErrClosed", err)
	}
	got, _ := io.ReadAll(r)
	if string(got) != `{"id":"fabric-1","type":"prompt"}`+"\n" {
		t.Errorf("wrote %q, want one JSON line", got)
	}
}

func TestLineWriterTimesOut(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	lw := NewLineWriter(w, 50*time.Millisecond)
	defer lw.Close()
	big := strings.Repeat("x", 1<<20) // more than a pipe holds, and nobody reads
	if err := lw.Send(big); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("Send to a full pipe = %v, want os.ErrDeadlineExceeded", err)
	}
}

func TestCalls(t *testing.T) {
	closed := make(chan struct{})
	close(closed)
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name    string
		ctx     context.Context
		closed  <-chan struct{}
		reply   bool // the reader delivers a reply to the call's id
		sendErr error
		want    string // the reply's value, or the error's text
	}{
		{name: "reply", ctx: context.Background(), reply: true, want: "pong"},
		{name: "output closed", ctx: context.Background(), closed: closed, want: "h closed its output"},
		{name: "cancelled", ctx: cancelled, want: context.Canceled.Error()},
		{name: "send fails", ctx: context.Background(), sendErr: errors.New("broken pipe"), want: "broken pipe"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := NewCalls[string]("h")
			if c.Deliver("fabric-1", "early") {
				t.Fatal("a reply for an id nobody waits for was delivered")
			}
			got, err := c.Call(tt.ctx, tt.closed, func(id string) error {
				if tt.sendErr != nil {
					return tt.sendErr
				}
				if tt.reply && !c.Deliver(id, "pong") {
					t.Error("the reply to a pending call was not delivered")
				}
				return nil
			})
			if err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Errorf("Call = %q, want %q", got, tt.want)
			}
			if c.Deliver("fabric-1", "late") {
				t.Error("a reply after the call ended was delivered")
			}
		})
	}
	if a, b := (&Calls[int]{}).NewID(), (&Calls[int]{}).NewID(); a != "fabric-1" || b != "fabric-1" {
		t.Errorf("first ids %q %q", a, b)
	}
}

func TestHandshakeFailed(t *testing.T) {
	stopped := false
	err := HandshakeFailed("code_x", "h", "initialize", errors.New("h closed its output"), func(ctx context.Context) error {
		if _, ok := ctx.Deadline(); !ok {
			t.Error("stop has no deadline")
		}
		stopped = true
		return nil
	}, nil)
	if !stopped || err.Code != "code_x" || err.Message != "h did not answer initialize: h closed its output" {
		t.Errorf("stopped %v, error %+v", stopped, err)
	}
}
