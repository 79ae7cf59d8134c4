package proc

import (
	"context"
	"errors"
	"fmt"
	"time"
)

var (
	// ErrExited is returned by AwaitHealthy when the child exited before it
	// was healthy.
	ErrExited = errors.New("proc: the child exited")
	// ErrNotListening is returned by AwaitHealthy when, after health, no
	// process of the child's group holds the listening socket on its port.
	ErrNotListening = errors.New("proc: the child's group does not hold the listening port")
)

// firstPause is AwaitHealthy's first pause between probes; it doubles up to
// the caller's maximum.
const firstPause = 50 * time.Millisecond

// AwaitHealthy waits for a server child to become healthy: it calls probe
// until it returns nil, pausing between calls from 50 ms, doubling up to
// maxPause. It fails with an error wrapping ErrExited (naming how the child
// ended) when the child exits first, and with ctx's error when ctx ends
// first. With port not 0 it then checks that the child's process group
// holds a socket listening on port (ErrNotListening otherwise), so that a
// foreign process answering on the port cannot pass for the child; where
// that cannot be checked (no procfs) the check is left out.
func (p *Process) AwaitHealthy(ctx context.Context, port uint16, maxPause time.Duration, probe func(context.Context) error) error {
	pause := firstPause
	for {
		if info, done := p.ExitState(); done {
			return fmt.Errorf("%w (%s)", ErrExited, info)
		}
		if probe(ctx) == nil {
			break
		}
		t := time.NewTimer(pause)
		select {
		case <-p.Done():
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		t.Stop()
		pause = min(2*pause, max(maxPause, firstPause))
	}
	if port == 0 {
		return nil
	}
	owns, err := p.OwnsListener(port)
	switch {
	case errors.Is(err, errors.ErrUnsupported):
		return nil
	case err != nil:
		return fmt.Errorf("proc: cannot confirm who listens on port %d: %w", port, err)
	case !owns:
		return fmt.Errorf("%w %d", ErrNotListening, port)
	}
	return nil
}
