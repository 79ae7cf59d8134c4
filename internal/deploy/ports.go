package deploy

import (
	"fmt"
	"os"
	"strings"

	"github.com/fabric-runtime/fabric/adapterkit/proc"
)

type holder struct {
	pid  int
	comm string
}

func (h holder) String() string {
	if h.pid == 0 {
		return "a process this user cannot see"
	}
	return fmt.Sprintf("pid %d (%s)", h.pid, h.comm)
}

// portHolders names the processes listening on port.
func portHolders(port int) []holder {
	pids, err := proc.PortHolders("", uint16(port))
	if err != nil {
		return nil
	}
	out := make([]holder, 0, len(pids))
	for _, pid := range pids {
		comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
		out = append(out, holder{pid: pid, comm: strings.TrimSpace(string(comm))})
	}
	return out
}

// inGroup reports whether pid is in the process group led by leader.
func inGroup(pid, leader int) bool {
	if pid == leader {
		return true
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return false
	}
	f := strings.Fields(s[i+1:])
	return len(f) > 2 && f[2] == fmt.Sprint(leader)
}
