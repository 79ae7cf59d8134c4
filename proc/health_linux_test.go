//go:build linux

package proc

import (
	"context"
	"errors"
	"net"
	"sync/atomic"
	"testing"
	"time"
)

func TestAwaitHealthy(t *testing.T) {
	start := func(t *testing.T, script string) *Process {
		p, err := Start(t.Context(), Spec{Path: "sh", Args: []string{"-c", script}, Grace: -1})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = p.Stop(context.Background()) })
		return p
	}
	freePort := func(t *testing.T) uint16 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		return uint16(ln.Addr().(*net.TCPAddr).Port)
	}
	t.Run("healthy after a few probes", func(t *testing.T) {
		p := start(t, "exec sleep 30")
		var calls atomic.Int32
		probe := func(context.Context) error {
			if calls.Add(1) < 3 {
				return errors.New("not yet")
			}
			return nil
		}
		if err := p.AwaitHealthy(t.Context(), 0, 100*time.Millisecond, probe); err != nil || calls.Load() != 3 {
			t.Fatalf("err %v after %d probes, want nil after 3", err, calls.Load())
		}
	})
	t.Run("the child exits first", func(t *testing.T) {
		p := start(t, "sleep 0.1; exit 3")
		err := p.AwaitHealthy(t.Context(), 0, 50*time.Millisecond, func(context.Context) error { return errors.New("down") })
		if !errors.Is(err, ErrExited) {
			t.Fatalf("err %v, want ErrExited", err)
		}
	})
	t.Run("the deadline ends the wait", func(t *testing.T) {
		p := start(t, "exec sleep 30")
		ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
		defer cancel()
		t0 := time.Now()
		err := p.AwaitHealthy(ctx, 0, time.Second, func(context.Context) error { return errors.New("down") })
		if !errors.Is(err, context.DeadlineExceeded) || time.Since(t0) > 2*time.Second {
			t.Fatalf("err %v after %s, want the deadline", err, time.Since(t0))
		}
	})
	t.Run("healthy but another process holds the port", func(t *testing.T) {
		// This test process listens; the child's group does not.
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		p := start(t, "exec sleep 30")
		err = p.AwaitHealthy(t.Context(), uint16(ln.Addr().(*net.TCPAddr).Port), 50*time.Millisecond, func(context.Context) error { return nil })
		if !errors.Is(err, ErrNotListening) {
			t.Fatalf("err %v, want ErrNotListening", err)
		}
	})
	t.Run("healthy and nothing listens", func(t *testing.T) {
		p := start(t, "exec sleep 30")
		err := p.AwaitHealthy(t.Context(), freePort(t), 50*time.Millisecond, func(context.Context) error { return nil })
		if !errors.Is(err, ErrNotListening) {
			t.Fatalf("err %v, want ErrNotListening", err)
		}
	})
}
