package host

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/hostproto"
)

// The test binary doubles as a scripted host: with envReply set it reads
// one request from its channel, writes the reply (with {{id}} replaced by
// the request's id) as one frame, and then waits for its channel to close.
// Two replies are scripted differently: replyClose closes the channel
// without answering and lives on until killed, replyNone never answers.
const envReply = "FABRIC_HOST_TEST_REPLY"

const (
	replyClose = "<close>"
	replyNone  = "<none>"
)

func TestMain(m *testing.M) {
	if reply, ok := os.LookupEnv(envReply); ok {
		os.Exit(scriptedHost(reply))
	}
	if os.Getenv(hostproto.EnvBundledAdapter) == envReportAdapter {
		os.Exit(reportHost())
	}
	os.Exit(m.Run())
}

func scriptedHost(reply string) int {
	in, out := io.Reader(os.Stdin), io.Writer(os.Stdout)
	if os.Getenv(hostproto.EnvProtocol) == contract.HostProtocolV2 {
		ch := os.NewFile(hostproto.ChannelFD, "channel")
		in, out = ch, ch
	}
	r := bufio.NewReader(in)
	line, err := r.ReadBytes('\n')
	if err != nil {
		return 2
	}
	var req struct {
		ID json.RawMessage `json:"id"`
	}
	_ = json.Unmarshal(line, &req)
	switch reply {
	case replyClose:
		if c, ok := out.(io.Closer); ok {
			_ = c.Close()
		}
		time.Sleep(time.Hour) // alive, with its channel closed
		return 2
	case replyNone:
		_, _ = io.Copy(io.Discard, r)
		return 0
	}
	reply = strings.ReplaceAll(reply, "{{id}}", string(req.ID))
	if _, err := io.WriteString(out, reply+"\n"); err != nil {
		return 2
	}
	_, _ = io.Copy(io.Discard, r) // until the core closes the channel
	return 0
}

func launchScripted(t *testing.T, protocol, reply string) *Host {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), envReply+"="+reply, hostproto.EnvProtocol+"="+protocol)
	h, err := Launch(context.Background(), Spec{Path: exe, Env: env, Protocol: protocol, Home: t.TempDir(), ExitGrace: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Terminate(context.Background()) })
	return h
}

// A host whose answer cannot be decoded broke the protocol, whichever
// protocol it speaks.
func TestBadAnswerIsProtocolError(t *testing.T) {
	v1 := func(output string) string {
		return `{"operation":"invoke","outcome":{"status":"succeeded","output":` + output + `}}`
	}
	v2 := func(result string) string {
		return `{"jsonrpc":"2.0","id":{{id}},"result":` + result + `}`
	}
	for _, tc := range []struct {
		name, protocol, reply string
	}{
		{"v1 frame not JSON", contract.HostProtocolV1, `{"operation":`},
		{"v2 frame not JSON", contract.HostProtocolV2, `{"jsonrpc":"2.0","id":`},
		{"v1 result of the wrong type", contract.HostProtocolV1, v1(`{"status":1}`)},
		{"v2 result of the wrong type", contract.HostProtocolV2, v2(`{"status":1}`)},
		{"v1 result not an object", contract.HostProtocolV1, v1(`[1]`)},
		{"v2 result not an object", contract.HostProtocolV2, v2(`[1]`)},
		{"v1 result breaks the rules", contract.HostProtocolV1, v1(`{"status":"failed"}`)},
		{"v2 result breaks the rules", contract.HostProtocolV2, v2(`{"status":"failed"}`)},
		{"v1 blank error code", contract.HostProtocolV1, v1(`{"status":"failed","error":{"code":" ","message":"it broke"}}`)},
		{"v2 blank artifact kind", contract.HostProtocolV2, v2(`{"status":"succeeded","artifacts":[{"name":"t","kind":"","path":"t"}]}`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := launchScripted(t, tc.protocol, tc.reply)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			_, err := h.Invoke(ctx, hostproto.InvokeParams{RuntimeContext: contract.RuntimeContext{InvocationID: "inv-1"}}, nil)
			var he *Error
			if !errors.As(err, &he) || he.Code != CodeProtocolError {
				t.Fatalf("Invoke error = %v, want code %s", err, CodeProtocolError)
			}
		})
	}
}

// A host that closes its channel has crashed as far as the core can tell
// (docs/errors.md), whether or not its process has exited yet, and the
// call says so at once.
func TestClosedChannelIsHostCrashed(t *testing.T) {
	for _, protocol := range []string{contract.HostProtocolV1, contract.HostProtocolV2} {
		t.Run(protocol, func(t *testing.T) {
			h := launchScripted(t, protocol, replyClose)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			_, err := h.Invoke(ctx, hostproto.InvokeParams{RuntimeContext: contract.RuntimeContext{InvocationID: "inv-1"}}, nil)
			var he *Error
			if !errors.As(err, &he) || he.Code != CodeHostCrashed {
				t.Fatalf("Invoke error = %v, want code %s", err, CodeHostCrashed)
			}
			select {
			case <-h.Exited():
				t.Fatal("the scripted host exited: the test did not reach a live host with a closed channel")
			default:
			}
			h.Kill(context.Background())
		})
	}
}

// A v1 channel left out of step by a cancelled call is no longer usable:
// the next call fails with host_io without writing anything.
func TestOutOfStepChannelIsHostIO(t *testing.T) {
	h := launchScripted(t, contract.HostProtocolV1, replyNone)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := h.Invoke(ctx, hostproto.InvokeParams{}, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled Invoke = %v, want context.Canceled", err)
	}
	_, err := h.Invoke(context.Background(), hostproto.InvokeParams{}, nil)
	var he *Error
	if !errors.As(err, &he) || he.Code != CodeHostIO {
		t.Fatalf("next Invoke = %v, want code %s", err, CodeHostIO)
	}
}
