package conformance

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/fabric-runtime/fabric/internal/procfs"
)

// procChecks says whether process checks are available here.
const procChecks = true

// groupMembers lists the live (non-zombie) processes of process group pgid.
func groupMembers(pgid int) []int {
	pids, _ := procfs.Default.GroupPids(pgid)
	return pids
}

// processesMentioning lists live processes, other than this one, whose
// environment contains dir: hosts started with a home under a state dir
// and every descendant that inherited their environment, whichever process
// group or session they moved to.
func processesMentioning(dir string) []int {
	self := os.Getpid()
	pids, _ := procfs.Default.EnvPids(func(entry string) bool { return strings.Contains(entry, dir) })
	return slices.DeleteFunc(pids, func(pid int) bool { return pid == self })
}

// killGroup sends SIGKILL to process group pgid.
func killGroup(pgid int) error { return syscall.Kill(-pgid, syscall.SIGKILL) }

// killPids sends SIGKILL to each process.
func killPids(list []int) {
	for _, pid := range list {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

// hostExe is the path of the binary process pid runs.
func hostExe(pid int) (string, error) { return os.Readlink("/proc/" + strconv.Itoa(pid) + "/exe") }
