package host

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/fabric-runtime/fabric/internal/hostproto"
	"github.com/fabric-runtime/fabric/internal/wire"
	"github.com/fabric-runtime/fabric/proc"
)

// v1Channel speaks upstream's newline-delimited JSON on the host's stdin and
// stdout: one request, then exactly one response, strictly in order.
type v1Channel struct {
	h        *Host
	mu       sync.Mutex // one operation at a time
	in       *os.File
	out      *os.File
	frames   chan v1Frame
	done     chan struct{}
	wg       sync.WaitGroup
	broken   error
	closeOne sync.Once
	buf      []byte
}

// exitDrain is how long a call waits for a last answer from a host that
// has exited (its stdout may be held open by its own children).
const exitDrain = 200 * time.Millisecond

type v1Frame struct {
	data []byte
	err  error
}

func launchV1(ctx context.Context, h *Host, ps *proc.Spec) (channel, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	ps.Stdin, ps.Stdout = inR, outW
	p, err := proc.Start(ctx, *ps)
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, err
	}
	h.setProc(p)
	c := &v1Channel{h: h, in: inW, out: outR, frames: make(chan v1Frame, 1), done: make(chan struct{})}
	max := h.spec.MaxFrame
	if max <= 0 {
		max = wire.DefaultMaxFrame
	}
	c.wg.Add(1)
	go c.readLoop(wire.NewFrameReader(outR, max))
	return c, nil
}

func (c *v1Channel) readLoop(fr *wire.FrameReader) {
	defer c.wg.Done()
	for {
		frame, err := fr.ReadFrame()
		var f v1Frame
		if err != nil {
			f.err = err
		} else {
			f.data = bytes.Clone(frame)
		}
		select {
		case c.frames <- f:
		case <-c.done:
			return
		}
		if err != nil {
			return
		}
	}
}

func (c *v1Channel) setEvents(string, EventFunc) {}

func (c *v1Channel) close() {
	c.closeOne.Do(func() {
		close(c.done)
		c.in.Close()
		c.out.Close()
		c.wg.Wait()
	})
}

func (c *v1Channel) call(ctx context.Context, op string, params, result any) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.broken != nil {
		return c.h.fail(op, CodeHostIO, "host channel is no longer usable", c.broken)
	}
	payload, err := marshalParams(params)
	if err != nil {
		return fmt.Errorf("encode %s payload: %w", op, err)
	}
	c.buf, err = wire.AppendV1Request(c.buf[:0], wire.V1Request{Operation: op, Payload: payload})
	if err != nil {
		return err
	}
	c.buf = append(c.buf, '\n')
	if err := c.write(ctx, c.buf); err != nil {
		c.broken = err
		return err
	}
	select {
	case f := <-c.frames:
		return c.answer(op, f, result)
	case <-ctx.Done():
		// The stream is out of step now: the late answer would be taken
		// for the next request's.
		c.broken = context.Cause(ctx)
		return ctx.Err()
	case <-c.h.proc.Done():
		// The host may have answered just before exiting: its last line
		// can still be on its way through the reader.
		t := time.NewTimer(exitDrain)
		defer t.Stop()
		select {
		case f := <-c.frames:
			if f.err == nil {
				return c.answer(op, f, result)
			}
		case <-t.C:
		}
		c.broken = errors.New("host exited")
		return c.broken
	}
}

// write sends one frame, bounded by ctx.
func (c *v1Channel) write(ctx context.Context, frame []byte) error {
	if dl, ok := ctx.Deadline(); ok {
		c.in.SetWriteDeadline(dl)
	} else {
		c.in.SetWriteDeadline(time.Time{})
	}
	stop := context.AfterFunc(ctx, func() { c.in.SetWriteDeadline(time.Now()) })
	defer stop()
	_, err := c.in.Write(frame)
	if err != nil && ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

func (c *v1Channel) answer(op string, f v1Frame, result any) error {
	if f.err != nil {
		c.broken = f.err
		if errors.Is(f.err, wire.ErrFrameTooLarge) {
			return c.h.fail(op, CodeProtocolError, "host answered with an oversized frame", f.err)
		}
		return f.err
	}
	resp, err := wire.DecodeV1Response(f.data)
	if err != nil {
		c.broken = err
		return c.h.fail(op, CodeProtocolError, "host answered with a malformed response", err)
	}
	if resp.Operation != op {
		c.broken = fmt.Errorf("answer echoes %q", resp.Operation)
		return c.h.fail(op, CodeProtocolError, fmt.Sprintf("host answered %q to a %q request", resp.Operation, op), nil)
	}
	if resp.Outcome.Status == wire.V1StatusFailed {
		var info hostproto.ErrorData
		if err := json.Unmarshal(resp.Outcome.Error, &info); err != nil || info.Code == "" {
			c.broken = errors.New("malformed error")
			return c.h.fail(op, CodeProtocolError, "host reported a failure without a valid error", err)
		}
		if info.Stage != stageOf(op) {
			c.broken = errors.New("wrong error stage")
			return c.h.fail(op, CodeProtocolError, fmt.Sprintf("host reported stage %q for a %s failure", info.Stage, op), nil)
		}
		return adapterError(op, info)
	}
	if result == nil || len(resp.Outcome.Output) == 0 {
		return nil
	}
	if err := decodeResult(resp.Outcome.Output, result); err != nil {
		return c.h.fail(op, CodeProtocolError, "host output does not decode", err)
	}
	return nil
}

// marshalParams is json.Marshal(params), without reflection for an
// *InvokeParams.
func marshalParams(params any) ([]byte, error) {
	if p, ok := params.(*hostproto.InvokeParams); ok {
		return hostproto.MarshalInvokeParams(p)
	}
	return json.Marshal(params)
}
