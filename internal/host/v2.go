package host

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/hostproto"
	"github.com/fabric-runtime/fabric/internal/wire"
	"github.com/fabric-runtime/fabric/proc"
)

// v2Channel speaks JSON-RPC 2.0 over a Unix socket that the host sees as
// fd 3, leaving its stdout and stderr to logs.
type v2Channel struct {
	h      *Host
	conn   *wire.Conn
	runErr chan error

	mu     sync.Mutex
	events map[string]EventFunc
	once   sync.Once

	stopExitWatch func() bool
	drain         *time.Timer // under mu: closes the channel after the exit drain
	closed        bool        // under mu
}

func launchV2(ctx context.Context, h *Host, ps *proc.Spec) (channel, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	parent := os.NewFile(uintptr(fds[0]), "fabric-channel")
	child := os.NewFile(uintptr(fds[1]), "fabric-channel-host")
	ps.ExtraFiles = []*os.File{child}
	ps.Stdout = h.stderr.f
	p, err := proc.Start(ctx, *ps)
	child.Close()
	if err != nil {
		parent.Close()
		return nil, err
	}
	h.setProc(p)
	nc, err := net.FileConn(parent)
	parent.Close()
	if err != nil {
		p.Kill()
		return nil, err
	}
	c := &v2Channel{h: h, events: map[string]EventFunc{}, runErr: make(chan error, 1)}
	// Passive: the host speaks only to answer (events come during an
	// invoke, before its answer), so the core reads only while a call
	// waits, on the caller's goroutine, which saves a goroutine switch per
	// call. The host's exit is watched below, not by reading.
	c.conn = wire.NewConn(nc, nc, wire.Options{MaxFrame: h.spec.MaxFrame, Handler: wire.HandlerFunc(c.handle), Logger: h.logger, Passive: true})
	go func() { c.runErr <- c.conn.Run(context.Background()) }()
	// A host that died while something else holds its channel open must
	// still end the calls: once it has exited, and an answer it wrote just
	// before had time to arrive, the channel closes and every call fails
	// with errHostExited. (One watch for the channel rather than one per
	// call.)
	c.stopExitWatch = context.AfterFunc(h.exited, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if !c.closed {
			c.drain = time.AfterFunc(exitDrain, func() { c.conn.CloseWithCause(errHostExited) })
		}
	})
	return c, nil
}

func (c *v2Channel) handle(_ context.Context, req *wire.Request) (any, error) {
	if !req.IsNotification() || (req.Method != hostproto.NotifyEvent && req.Method != hostproto.NotifyEvents) {
		return nil, wire.NewError(wire.CodeMethodNotFound, "the core serves no method "+req.Method)
	}
	if len(req.Params) == 0 {
		return nil, wire.NewError(wire.CodeInvalidParams, req.Method+": missing params")
	}
	id, evs, _, err := hostproto.DecodeEventNotification(req.Method, req.Params)
	if err != nil {
		return nil, wire.NewError(wire.CodeInvalidParams, req.Method+": invalid params: "+err.Error())
	}
	if fn := c.eventsFor(id); fn != nil {
		for _, ev := range evs {
			fn(ev)
		}
	}
	return nil, nil
}

func (c *v2Channel) eventsFor(id string) EventFunc {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.events[id]
}

func (c *v2Channel) setEvents(id string, fn EventFunc) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if fn == nil {
		delete(c.events, id)
		return
	}
	c.events[id] = fn
}

func (c *v2Channel) close() {
	c.once.Do(func() {
		c.stopExitWatch()
		c.mu.Lock()
		c.closed = true
		if c.drain != nil {
			c.drain.Stop()
		}
		c.mu.Unlock()
		c.conn.Close()
		<-c.runErr
	})
}

func (c *v2Channel) call(ctx context.Context, op string, params, result any) error {
	var raw json.RawMessage
	target := result
	if _, ok := result.(*json.RawMessage); !ok && result != nil {
		target = &raw // decoded below, without a second validating pass
	}
	err := c.conn.Call(ctx, op, params, target)
	if err == nil {
		if target == &raw {
			if err := decodeResult(raw, result); err != nil {
				// The same failure as v1's: the host's output does not decode.
				return c.h.fail(op, CodeProtocolError, "host output does not decode", err)
			}
		}
		return nil
	}
	if errors.Is(err, errHostExited) {
		return c.h.fail(op, CodeHostCrashed, "host process exited", err)
	}
	var rpc *wire.Error
	if errors.As(err, &rpc) {
		if rpc.Code == hostproto.RPCLifecycleError {
			var info hostproto.ErrorData
			if json.Unmarshal(rpc.Data, &info) == nil && info.Code != "" {
				return adapterError(op, info)
			}
		}
		return c.h.fail(op, CodeProtocolError, "host answered with an unexpected error: "+rpc.Message, err)
	}
	if errors.Is(err, wire.ErrProtocol) || errors.Is(err, wire.ErrFrameTooLarge) {
		return c.h.fail(op, CodeProtocolError, "host broke the protocol", err)
	}
	return err
}

// decodeResult decodes an operation's output, which the channel has
// validated as JSON, into result (the AgentRunResult of every invoke
// without reflection, see hostproto.DecodeRunResult).
func decodeResult(raw []byte, result any) error {
	if r, ok := result.(*contract.AgentRunResult); ok {
		return hostproto.DecodeRunResult(raw, r)
	}
	return json.Unmarshal(raw, result)
}
