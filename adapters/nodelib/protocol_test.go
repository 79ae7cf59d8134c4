//go:build linux

package nodelib_test

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/fabric-runtime/fabric/internal/testsupport/testproc"
	"github.com/fabric-runtime/fabric/modelstub"
	"github.com/google/go-cmp/cmp"
)

// TestHostProtocol speaks fabric.host/v2 to the Strands host directly, frame
// by frame, on the channel fd the core would pass, and checks its answers
// against the protocol (internal/wire/PROTOCOL.md): the lifecycle errors,
// invalid requests, a refused second invoke, health and cancel while a turn
// runs, stop, and a frame that is not JSON, after which the host closes the
// channel and exits. The kit under test is the one both hosts share.
func TestHostProtocol(t *testing.T) {
	h := harnesses[1]
	path := harnessPath(t, h)
	stub := modelstub.New(&modelstub.Script{Rules: []modelstub.Rule{
		{Match: modelstub.Match{Contains: "STALL"}, Reply: modelstub.Reply{Stall: true}},
	}, Default: &modelstub.Reply{Text: "4"}}, modelstub.WithExpectKey(testKey))
	defer stub.Close()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	ours, theirs := os.NewFile(uintptr(fds[0]), "core"), os.NewFile(uintptr(fds[1]), "host")
	defer ours.Close()
	home := t.TempDir()
	cmd := exec.Command(filepath.Join(path[0], h.host))
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "PATH="+path[1]+":"+os.Getenv("PATH"), keyEnv+"="+testKey,
		"FABRIC_HOST_PROTOCOL=fabric.host/v2", "FABRIC_HOST_CHANNEL_FD=3", "FABRIC_HOME="+home)
	cmd.ExtraFiles = []*os.File{theirs}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	theirs.Close()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		_ = cmd.Process.Kill()
		<-exited
	}()

	in := bufio.NewScanner(ours)
	in.Buffer(make([]byte, 1<<20), 16<<20)
	send := func(frame string) {
		t.Helper()
		if _, err := ours.Write([]byte(frame + "\n")); err != nil {
			t.Fatal(err)
		}
	}
	recv := func() map[string]any {
		t.Helper()
		_ = ours.SetReadDeadline(time.Now().Add(60 * time.Second))
		if !in.Scan() {
			t.Fatalf("no frame from the host: %v", in.Err())
		}
		var m map[string]any
		if err := json.Unmarshal(in.Bytes(), &m); err != nil {
			t.Fatalf("frame %s: %v", in.Bytes(), err)
		}
		if m["jsonrpc"] != "2.0" {
			t.Fatalf("frame without jsonrpc 2.0: %s", in.Bytes())
		}
		delete(m, "jsonrpc")
		return m
	}
	// errOf keeps an error answer's id, code and (for lifecycle errors)
	// data.code.
	errOf := func(m map[string]any) map[string]any {
		e, _ := m["error"].(map[string]any)
		out := map[string]any{"id": m["id"], "code": e["code"]}
		if d, ok := e["data"].(map[string]any); ok {
			out["data.code"] = d["code"]
		}
		return out
	}
	start := `{"jsonrpc":"2.0","id":2,"method":"start","params":{"agent_name":"p","base_dir":"/","config":{"schema_version":"fabric.agent/v1alpha1","models":{"default":{"provider":"stub","model":"stub-model","api_key_env":"` +
		keyEnv + `","base_url":"` + stub.OpenAIBaseURL() + `"}}},"runtime_context":{"runtime_id":"runtime-1","invocation_id":"runtime-start-1","request_id":"request-0"}}}`
	invoke := func(id int, inv, input string) string {
		return `{"jsonrpc":"2.0","id":` + itoa(id) + `,"method":"invoke","params":{"runtime_context":{"runtime_id":"runtime-1","invocation_id":"` + inv + `","request_id":"r"},"request":{"input":"` + input + `"}}}`
	}
	steps := []struct {
		name  string
		frame string
		want  map[string]any
		check func(m map[string]any) map[string]any
	}{
		{"unknown method", `{"jsonrpc":"2.0","id":1,"method":"teleport"}`, map[string]any{"id": 1.0, "code": -32601.0}, errOf},
		{"batch", `[{"jsonrpc":"2.0","id":9,"method":"health"}]`, map[string]any{"id": nil, "code": -32600.0}, errOf},
		{"invoke before start", invoke(3, "invocation-0", "hi"), map[string]any{"id": 3.0, "code": 1000.0, "data.code": "lifecycle_not_started"}, errOf},
		{"start", start, map[string]any{"id": 2.0, "ok": true}, func(m map[string]any) map[string]any {
			_, ok := m["result"].(map[string]any)
			return map[string]any{"id": m["id"], "ok": ok}
		}},
		{"a turn", invoke(4, "invocation-1", "What is 2+2?"), map[string]any{"id": 4.0, "status": "succeeded", "output": "4"}, result},
		{"a stalled turn", invoke(5, "invocation-2", "STALL"), nil, nil},
		{"second invoke refused", invoke(6, "invocation-3", "again"), map[string]any{"id": 6.0, "code": 1000.0, "data.code": "runtime_busy"}, errOf},
		{"health while busy", `{"jsonrpc":"2.0","id":7,"method":"health","params":{"level":"ready","timeout_millis":1000}}`, map[string]any{"id": 7.0, "outcome": "passed", "activity": "busy"}, func(m map[string]any) map[string]any {
			r, _ := m["result"].(map[string]any)
			return map[string]any{"id": m["id"], "outcome": r["outcome"], "activity": r["activity"]}
		}},
		{"cancel", `{"jsonrpc":"2.0","id":8,"method":"cancel","params":{"invocation_id":"invocation-2"}}`, map[string]any{"id": 8.0, "cancelled": true}, func(m map[string]any) map[string]any {
			r, _ := m["result"].(map[string]any)
			return map[string]any{"id": m["id"], "cancelled": r["cancelled"]}
		}},
		{"the stalled turn ends cancelled", "", map[string]any{"id": 5.0, "status": "cancelled", "output": ""}, result},
		{"cancel of nothing", `{"jsonrpc":"2.0","id":10,"method":"cancel","params":{"invocation_id":"invocation-2"}}`, map[string]any{"id": 10.0, "cancelled": false}, func(m map[string]any) map[string]any {
			r, _ := m["result"].(map[string]any)
			return map[string]any{"id": m["id"], "cancelled": r["cancelled"]}
		}},
		{"the runtime still answers", invoke(11, "invocation-4", "What is 2+2?"), map[string]any{"id": 11.0, "status": "succeeded", "output": "4"}, result},
		{"not JSON", `{"jsonrpc":"2.0","id":12,"method":"invoke","params":`, map[string]any{"id": nil, "code": -32700.0}, errOf},
	}
	for _, s := range steps {
		if s.frame != "" {
			send(s.frame)
		}
		if s.check == nil {
			continue
		}
		var got map[string]any
		for {
			m := recv()
			if m["method"] == "event" {
				continue // progress of a turn, before its answer
			}
			got = s.check(m)
			break
		}
		if diff := cmp.Diff(s.want, got); diff != "" {
			t.Fatalf("%s (-want +got):\n%s", s.name, diff)
		}
	}
	// After a frame that is not JSON the host closes the channel and exits.
	_ = ours.SetReadDeadline(time.Now().Add(30 * time.Second))
	if in.Scan() {
		t.Fatalf("a frame after the parse error: %s", in.Bytes())
	}
	select {
	case <-exited:
		exited <- nil
	case <-time.After(30 * time.Second):
		t.Fatal("the host did not exit after the channel closed")
	}
	if left := testproc.Mentioning(home); len(left) > 0 {
		t.Errorf("processes with the runtime's home left: %v", left)
	}
	if _, err := os.Stat(filepath.Join(home, "nodehost")); !os.IsNotExist(err) {
		t.Errorf("the private directory remains: %v", err)
	}
}

func result(m map[string]any) map[string]any {
	r, _ := m["result"].(map[string]any)
	return map[string]any{"id": m["id"], "status": r["status"], "output": r["output"]}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }
