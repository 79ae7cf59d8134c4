package agentctl

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// Environment variables that place the socket.
const (
	EnvSocket        = "FABRIC_AGENT_CTL_SOCKET"
	EnvArtifactsRoot = "FABRIC_ARTIFACTS_ROOT"
)

// DefaultSocketName is the socket's name inside <artifact root>/.fabric.
const DefaultSocketName = "agent-ctl.sock"

// CodeCancelled is returned by the client when its context is cancelled
// before serve answered (for example on SIGINT).
const CodeCancelled = "cancelled"

// DefaultSocket returns the socket path used when none is given:
// $FABRIC_AGENT_CTL_SOCKET, else $FABRIC_ARTIFACTS_ROOT/.fabric/agent-ctl.sock,
// else .fabric/agent-ctl.sock in the working directory; always absolute.
func DefaultSocket(getenv func(string) string) (string, error) {
	if p := getenv(EnvSocket); p != "" {
		return filepath.Abs(p)
	}
	root := getenv(EnvArtifactsRoot)
	if root == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", err
		}
		root = wd
	}
	return filepath.Abs(filepath.Join(root, ".fabric", DefaultSocketName))
}

// NewOperationID returns a fresh operation id ("op-" and 16 hex digits).
func NewOperationID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "op-" + hex.EncodeToString(b[:])
}

// Client sends requests to a serve. The zero value is not usable: Socket
// is required.
type Client struct {
	Socket string
	// DialTimeout bounds connecting (default 2 s).
	DialTimeout time.Duration
	// Connected, when set, is called once connected, before the request
	// is sent: from there on the client waits for serve, so that is where
	// a caller starts watching for what cancels ctx (fabric-agent-ctl
	// catches SIGINT there). A Unix-socket connect answers at once (with
	// EAGAIN when serve's listen backlog is full; Go does not wait), so a
	// probe of a dead socket fails before it.
	Connected func()
}

// Do sends req (ProtocolVersion and OperationID are filled in when empty)
// and returns serve's response, whatever its status. ctx bounds the whole
// exchange; cancelling it closes the connection, which serve takes as the
// caller giving up (a running invoke is cancelled). Transport failures are
// *Error with CodeServeUnreachable, CodeServeTimeout, CodeCancelled or
// CodeProtocolError.
func (c *Client) Do(ctx context.Context, req *Request) (*Response, error) {
	return c.DoStream(ctx, req, nil)
}

// recordPrefix starts every record line of a streamed invoke.
var recordPrefix = []byte(`{"record":`)

// DoStream is Do for an invoke with Stream set: onRecord gets each record
// line (one JSON document, without its newline) as serve writes it; an
// error from onRecord ends the exchange (serve then cancels the turn).
func (c *Client) DoStream(ctx context.Context, req *Request, onRecord func(line []byte) error) (*Response, error) {
	if req.ProtocolVersion == "" {
		req.ProtocolVersion = ProtocolVersion
	}
	if req.OperationID == "" {
		req.OperationID = NewOperationID()
	}
	line, err := EncodeRequest(req)
	if err != nil {
		return nil, &Error{Code: CodeUsage, Message: fmt.Sprintf("cannot encode the request: %v", err)}
	}
	dt := c.DialTimeout
	if dt <= 0 {
		dt = 2 * time.Second
	}
	d := net.Dialer{Timeout: dt}
	conn, err := d.DialContext(ctx, "unix", c.Socket)
	if err != nil {
		if ce := ctxError(ctx); ce != nil {
			return nil, ce
		}
		return nil, &Error{Code: CodeServeUnreachable, Retryable: true, Message: fmt.Sprintf("no fabric-agent-ctl serve answers on %s: %v", c.Socket, unwrapNet(err))}
	}
	defer conn.Close()
	if c.Connected != nil {
		c.Connected()
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()

	// A request serve refuses early (too large) may fail to write in full;
	// its answer is still worth reading.
	_, werr := conn.Write(line)
	br := bufio.NewReaderSize(conn, 8<<10)
	resp, rerr := readLine(br, MaxResponseBytes)
	for rerr == nil && bytes.HasPrefix(resp, recordPrefix) {
		if onRecord == nil {
			return nil, &Error{Code: CodeProtocolError, Message: "serve streamed records to a request that asked for none"}
		}
		if err := onRecord(resp); err != nil {
			return nil, &Error{Code: CodeCancelled, Message: fmt.Sprintf("streaming stopped: %v", err)}
		}
		resp, rerr = readLine(br, MaxResponseBytes)
	}
	if rerr != nil {
		if ce := ctxError(ctx); ce != nil {
			return nil, ce
		}
		var ne net.Error
		if errors.As(rerr, &ne) && ne.Timeout() {
			return nil, &Error{Code: CodeServeTimeout, Retryable: true, Message: "serve did not answer in time"}
		}
		if errors.Is(rerr, io.EOF) || errors.Is(rerr, io.ErrUnexpectedEOF) || isReset(rerr) {
			msg := "serve closed the connection without answering"
			if werr != nil {
				msg += fmt.Sprintf(" (sending the request failed: %v)", unwrapNet(werr))
			}
			return nil, &Error{Code: CodeServeUnreachable, Retryable: true, Message: msg}
		}
		if errors.Is(rerr, errLineTooLong) {
			return nil, &Error{Code: CodeProtocolError, Message: fmt.Sprintf("serve's answer is larger than %d bytes", MaxResponseBytes)}
		}
		return nil, &Error{Code: CodeServeUnreachable, Retryable: true, Message: fmt.Sprintf("reading serve's answer: %v", unwrapNet(rerr))}
	}
	r, err := DecodeResponse(resp)
	if err != nil {
		var pe *Error
		if errors.As(err, &pe) {
			return nil, pe
		}
		return nil, &Error{Code: CodeProtocolError, Message: err.Error()}
	}
	return r, nil
}

func ctxError(ctx context.Context) *Error {
	switch {
	case ctx.Err() == nil:
		return nil
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return &Error{Code: CodeServeTimeout, Retryable: true, Message: "serve did not answer in time"}
	}
	return &Error{Code: CodeCancelled, Message: "cancelled before serve answered"}
}

func unwrapNet(err error) error {
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Err != nil {
		var se *os.SyscallError
		if errors.As(oe.Err, &se) {
			return se.Err
		}
		return oe.Err
	}
	return err
}

func isReset(err error) bool {
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

var errLineTooLong = errors.New("line too long")

// readLine reads up to and excluding the next newline, at most max bytes.
// At end of input after some bytes it returns them with
// io.ErrUnexpectedEOF.
func readLine(br *bufio.Reader, max int) ([]byte, error) {
	var out []byte
	for {
		frag, err := br.ReadSlice('\n')
		if len(out)+len(frag) > max+1 {
			return nil, errLineTooLong
		}
		out = append(out, frag...)
		switch {
		case err == nil:
			return out[:len(out)-1], nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && len(out) > 0:
			return out, io.ErrUnexpectedEOF
		default:
			return nil, err
		}
	}
}

// ReadRequestLine reads one request line of at most MaxRequestBytes from
// br. It returns an error for which IsTooLarge is true when the line is
// longer, and the bytes read with io.ErrUnexpectedEOF when the input ends
// without a newline.
func ReadRequestLine(br *bufio.Reader) ([]byte, error) { return readLine(br, MaxRequestBytes) }

// IsTooLarge reports whether err is ReadRequestLine's too-large error.
func IsTooLarge(err error) bool { return errors.Is(err, errLineTooLong) }
