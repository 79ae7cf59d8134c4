package deploy

import (
	"fmt"

	"github.com/fabric-runtime/fabric/internal/procfs"
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
	pids, err := procfs.Default.PortHolders(uint16(port))
	if err != nil {
		return nil
	}
	out := make([]holder, 0, len(pids))
	for _, pid := range pids {
		st, _ := procfs.Default.Stat(pid)
		out = append(out, holder{pid: pid, comm: st.Comm})
	}
	return out
}

// inGroup reports whether pid is in the process group led by leader.
func inGroup(pid, leader int) bool {
	if pid == leader {
		return true
	}
	st, err := procfs.Default.Stat(pid)
	return err == nil && st.PGID == leader
}
