package cli

import (
	"encoding/json"
	"errors"
	"os"
	"syscall"

	"github.com/rogpeppe/go-internal/testscript"
)

// cmdHostGone is the scripts' `hostgone STATUS.json`: every agent host
// process a saved `fabric deploy status` names is gone (no such process,
// as the kernel says, not as Fabric reports); with `!`, every one is
// still alive.
func cmdHostGone(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: hostgone STATUS.json")
	}
	var st struct {
		Status struct {
			Agents []struct {
				Name    string `json:"name"`
				HostPid int    `json:"host_pid"`
			} `json:"agents"`
		} `json:"status"`
	}
	b, err := os.ReadFile(ts.MkAbs(args[0]))
	ts.Check(err)
	ts.Check(json.Unmarshal(b, &st))
	n := 0
	for _, a := range st.Status.Agents {
		if a.HostPid == 0 {
			continue
		}
		n++
		gone := errors.Is(syscall.Kill(a.HostPid, 0), syscall.ESRCH)
		if gone == neg {
			ts.Fatalf("agent %s: host pid %d gone: %v", a.Name, a.HostPid, gone)
		}
	}
	if n == 0 {
		ts.Fatalf("%s names no agent host pid", args[0])
	}
}
