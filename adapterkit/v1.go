package adapterkit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/fabric-runtime/fabric/internal/hostproto"
	"github.com/fabric-runtime/fabric/internal/wire"
)

// serveV1 runs protocol v1 on r and w until a stop, the end of r, a fatal
// request, or ctx. Requests are read, handled and answered one at a time by
// a worker goroutine so that ctx can end the host while the worker is
// blocked in a read or in the adapter.
func (h *host) serveV1(ctx context.Context, r io.Reader, w io.Writer) error {
	done := make(chan error, 1)
	go func() {
		growStack(0) // see growStack
		done <- h.loopV1(ctx, r, w)
	}()
	var err error
	select {
	case err = <-done:
		h.stopSession()
		closeIO(r, w)
	case <-ctx.Done():
		h.log.Info("adapterkit: shutting down", "cause", context.Cause(ctx))
		closeIO(r, w) // interrupts a blocked read or write
		h.stopSession()
		if _, ok := waitFor(done, h.cfg.stopGrace); !ok {
			h.log.Warn("adapterkit: protocol worker did not return; leaving it")
		}
	}
	return err
}

// loopV1 is the strictly ordered request loop. It mirrors upstream's
// TypeScript host (nemo-fabric-adapters-common, lifecycle.js): one response
// line per request line; a request that is not JSON, not an object or not
// a known operation is answered with a failed outcome; the loop ends after
// answering any stop and any failed start. Blank lines are skipped (the
// framing of internal/wire), where upstream would answer them as invalid
// JSON.
func (h *host) loopV1(ctx context.Context, r io.Reader, w io.Writer) error {
	fr := wire.NewFrameReader(r, h.cfg.maxFrame)
	var buf []byte
	for {
		frame, err := fr.ReadFrame()
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			if err == io.EOF {
				return nil
			}
			if errors.Is(err, wire.ErrFrameTooLarge) {
				buf, _ = h.appendFailure(buf[:0], hostproto.OpStart, lifecycleFailure(hostproto.OpStart, CodeInvalidRequest, "Lifecycle request exceeds the frame limit"))
				_ = writeLine(w, buf)
			}
			return fmt.Errorf("adapterkit: v1 read: %w", err)
		}
		var last bool
		buf, last = h.handleV1(ctx, buf[:0], frame)
		if ctx.Err() != nil {
			return nil // shutting down: nobody reads the answer
		}
		if err := writeLine(w, buf); err != nil {
			return fmt.Errorf("adapterkit: v1 write: %w", err)
		}
		if last {
			return nil
		}
		if cap(buf) > 64<<10 {
			buf = nil
		}
	}
}

func writeLine(w io.Writer, line []byte) error {
	line = append(line, '\n')
	n, err := w.Write(line)
	if err == nil && n != len(line) {
		err = io.ErrShortWrite
	}
	return err
}

// handleV1 handles one request frame, appends the response (without the
// newline) to dst, and reports whether the host must end after sending it.
func (h *host) handleV1(ctx context.Context, dst, frame []byte) ([]byte, bool) {
	op := hostproto.OpStart // upstream's operation for a request it cannot read
	var env struct {
		Operation json.RawMessage `json:"operation"`
		Payload   json.RawMessage `json:"payload"`
	}
	if err := json.Unmarshal(frame, &env); err != nil {
		if _, ok := errors.AsType[*json.UnmarshalTypeError](err); !ok {
			return h.failV1(dst, op, lifecycleFailure(op, CodeInvalidRequest, "Lifecycle request is not valid JSON")), true
		}
	}
	if !isObject(frame) {
		return h.failV1(dst, op, lifecycleFailure(op, CodeInvalidRequest, "Lifecycle request must be an object")), true
	}
	known := false
	if len(env.Operation) > 0 && env.Operation[0] == '"' {
		var s string
		if json.Unmarshal(env.Operation, &s) == nil {
			op = s
			known = s == hostproto.OpStart || s == hostproto.OpInvoke || s == hostproto.OpStop
		}
	}
	last := op == hostproto.OpStart || op == hostproto.OpStop
	if !known {
		return h.failV1(dst, op, lifecycleFailure(op, CodeInvalidOperation, "Unknown lifecycle operation")), last
	}
	if !isObject(env.Payload) {
		return h.failV1(dst, op, lifecycleFailure(op, CodeInvalidPayload, "Lifecycle payload must be an object")), last
	}

	switch op {
	case hostproto.OpStart:
		p, runtimeID, bad := decodeStart(env.Payload)
		if fail, _ := h.start(&p, runtimeID, bad); fail != nil {
			return h.failV1(dst, op, fail), true
		}
		return appendSuccess(dst, op, nil), false
	case hostproto.OpInvoke:
		p, runtimeID, bad := decodeInvoke(env.Payload)
		out, fail := h.invoke(ctx, &p, runtimeID, bad, discardEmitter{})
		if fail != nil {
			return h.failV1(dst, op, fail), false
		}
		return appendSuccess(dst, op, out), false
	default: // stop
		if fail := h.stop(decodeStopRuntimeID(env.Payload), true); fail != nil {
			return h.failV1(dst, op, fail), true
		}
		return appendSuccess(dst, op, nil), true
	}
}

// failV1 appends a failed response. If the error cannot be encoded (its
// metadata holds something JSON cannot carry), it answers
// lifecycle_invalid_response instead and, for an invoke, fails the
// runtime, as upstream does.
func (h *host) failV1(dst []byte, op string, fail *hostproto.ErrorData) []byte {
	out, err := h.appendFailure(dst, op, fail)
	if err == nil {
		return out
	}
	h.log.Error("adapterkit: lifecycle error cannot be encoded", "op", op, "error", err)
	if op == hostproto.OpInvoke {
		h.mu.Lock()
		h.failed = true
		h.mu.Unlock()
	}
	out, _ = h.appendFailure(dst, op, lifecycleFailure(op, CodeInvalidResponse, "Adapter response could not be encoded as lifecycle JSON"))
	return out
}

// appendFailure appends {"operation":op,"outcome":{"status":"failed","error":{...}}}.
// The stage is the operation's, as upstream reports it.
func (h *host) appendFailure(dst []byte, op string, fail *hostproto.ErrorData) ([]byte, error) {
	e := *fail
	e.Stage = op
	b, err := json.Marshal(&e)
	if err != nil {
		return dst, err
	}
	dst = append(dst, `{"operation":`...)
	dst = wire.AppendString(dst, op, false)
	dst = append(dst, `,"outcome":{"status":"failed","error":`...)
	dst = append(dst, b...)
	return append(dst, "}}"...), nil
}

// appendSuccess appends {"operation":op,"outcome":{"status":"succeeded","output":out}};
// out is compact JSON or nil for null.
func appendSuccess(dst []byte, op string, out json.RawMessage) []byte {
	dst = append(dst, `{"operation":`...)
	dst = wire.AppendString(dst, op, false)
	dst = append(dst, `,"outcome":{"status":"succeeded","output":`...)
	if out == nil {
		dst = append(dst, "null"...)
	} else {
		dst = append(dst, out...)
	}
	return append(dst, "}}"...)
}

// isObject reports whether raw, valid JSON, is an object.
func isObject(raw []byte) bool {
	for _, c := range raw {
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		}
		return c == '{'
	}
	return false
}
