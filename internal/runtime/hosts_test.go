package runtime

import (
	"context"
	"errors"
	"os"
	"testing"

	"github.com/fabric-runtime/fabric/contract"
)

// Raw hosts written in sh exercise every transport failure the core must
// classify, without any Go adapter involved; the same failure gets the
// same code over v1 and v2.
func TestMisbehavingHosts(t *testing.T) {
	tests := []struct {
		host      string
		startCode string // "" = start succeeds
		code      string // error code of the invoke result
		status    string
	}{
		{host: "garbage", code: "protocol_error", status: contract.StatusFailed},
		{host: "oversized", code: "protocol_error", status: contract.StatusFailed},
		{host: "wrongop", code: "protocol_error", status: contract.StatusFailed},
		{host: "wrongstage", code: "protocol_error", status: contract.StatusFailed},
		{host: "badresult", code: "protocol_error", status: contract.StatusFailed},
		{host: "v1undecodable", code: "protocol_error", status: contract.StatusFailed},
		{host: "v2undecodable", code: "protocol_error", status: contract.StatusFailed},
		{host: "v2garbage", code: "protocol_error", status: contract.StatusFailed},
		{host: "v2badresult", code: "protocol_error", status: contract.StatusFailed},
		{host: "eof", code: "host_crashed", status: contract.StatusFailed},
		{host: "hangstart", startCode: "host_timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.host, func(t *testing.T) {
			t.Parallel()
			p := testPlan(t, "test.host."+tt.host, nil)
			opts := testOptions(t)
			rt, err := Start(context.Background(), p, opts)
			if tt.startCode != "" {
				var re *contract.RuntimeError
				if !errors.As(err, &re) || re.Code != tt.startCode {
					t.Fatalf("start error = %v, want code %s", err, tt.startCode)
				}
				assertNoHomes(t, opts.StateDir)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			pgid := rt.HostPid()
			res, err := rt.Invoke(context.Background(), contract.RunRequest{Input: "hi"}, InvokeOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != tt.status || res.Error == nil || res.Error.Code != tt.code || res.Error.Stage != contract.StageInvoke {
				t.Fatalf("result = %s %+v, want %s %s", res.Status, res.Error, tt.status, tt.code)
			}
			if rt.State() != StateFailed {
				t.Fatalf("state = %s, want failed", rt.State())
			}
			_, err = rt.Invoke(context.Background(), contract.RunRequest{Input: "again"}, InvokeOptions{})
			var se *contract.StateError
			if !errors.As(err, &se) || se.Code != CodeRuntimeFailed {
				t.Fatalf("invoke on failed runtime: %v", err)
			}
			stop, err := rt.Stop(context.Background())
			if err != nil || !stop.HostCrashed {
				t.Fatalf("stop = %+v, %v", stop, err)
			}
			waitGroupGone(t, pgid)
			assertNoHomes(t, opts.StateDir)
		})
	}
}

func TestStopKillsGrandchildrenAndHangingHosts(t *testing.T) {
	for _, tc := range []struct {
		name   string
		killed bool // the host itself had to be killed
	}{
		{"grandchild", false}, // exits on stop; its children are killed with the group
		{"stophang", true},    // never exits: killed after the exit grace
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			opts := testOptions(t)
			rt, err := Start(context.Background(), testPlan(t, "test.host."+tc.name, nil), opts)
			if err != nil {
				t.Fatal(err)
			}
			pgid := rt.HostPid()
			res, err := rt.Invoke(context.Background(), contract.RunRequest{Input: "x"}, InvokeOptions{})
			if err != nil || res.Status != contract.StatusSucceeded || res.Output != "ok" {
				t.Fatalf("invoke = %+v, %v", res, err)
			}
			stop, err := rt.Stop(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if len(stop.Events) != 1 || stop.Events[0].Kind != contract.EventRuntimeStop {
				t.Fatalf("stop events = %+v", stop.Events)
			}
			if got := stop.Events[0].Metadata["host_killed"] == true; got != tc.killed {
				t.Errorf("runtime.stop metadata %v: host_killed = %v, want %v", stop.Events[0].Metadata, got, tc.killed)
			}
			waitGroupGone(t, pgid)
			assertNoHomes(t, opts.StateDir)
		})
	}
}

func assertNoHomes(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	if len(entries) > 0 {
		t.Fatalf("runtime homes left behind: %v", entries)
	}
}
