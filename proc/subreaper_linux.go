//go:build linux

package proc

import (
	"os"
	"os/signal"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fabric-runtime/fabric/internal/procfs"
)

// OrphanGrace bounds how long RunAsSubreaper lets serve wind down after this
// process's parent died, before it kills its tree and exits.
const OrphanGrace = 2 * time.Second

// RunAsSubreaper runs serve with this process made the subreaper
// (PR_SET_CHILD_SUBREAPER) of everything it starts, then kills what is
// left of its tree (KillDescendants) and returns serve's exit code. A host
// binary calls it around its whole life; bundled.ServeHost does.
//
// As a subreaper, this process adopts every descendant whose parent dies
// (a launcher that exits, a double fork, a worker a cancelled turn left):
// they stay in its tree instead of going to init, so that the kill at the
// end reaches them even when they left the process group and cleared
// their environment. Adopted processes that exit are not reaped before
// the end (reaping an unknown pid would race os/exec's own waits): they
// stay zombies, which hold no memory, until the end or this process's
// exit.
//
// It also asks to be sent SIGTERM when its parent dies (PR_SET_PDEATHSIG,
// replacing proc.Start's SIGKILL): serve sees the SIGTERM as a stop, and
// if it has not returned OrphanGrace later, the tree is killed and the
// process exits with code 143. A parent that is SIGKILLed is a
// different case: this process dies with it (when it is in the parent's
// group) or is told as above, but if this process itself is SIGKILLed its
// tree is left to its own parent, which is why the core sweeps a dead
// host's tree by its environment marker (internal/host).
//
// When the parent died before the signal was armed, serve is not run and
// the exit code is 1.
func RunAsSubreaper(serve func() int) int {
	parent := os.Getppid()
	_ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
	_ = unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(unix.SIGTERM), 0, 0, 0)
	if os.Getppid() != parent { // the parent died before the signal was armed
		return 1
	}
	// Each reparenting of this process sends the signal again: when the
	// thread that forked it exits before the rest of its parent process,
	// it is first reparented within that process (getppid unchanged), and
	// told again when it is reparented out of it.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM)
	defer signal.Stop(sigs)
	served := make(chan struct{})
	defer close(served)
	go func() {
		for {
			select {
			case <-served:
				return
			case <-sigs:
			}
			if os.Getppid() != parent { // orphaned; otherwise a stop, serve's to handle
				time.AfterFunc(OrphanGrace, func() {
					KillDescendants()
					os.Exit(143)
				})
				return
			}
		}
	}()
	code := serve()
	KillDescendants()
	return code
}

// KillDescendants SIGKILLs every process in this process group and every
// child of this process (those it started and those reparented to it as
// a subreaper), and reaps those children, until none is left (bounded by
// half a second). A child's own children are reparented to this process
// when it dies, if it is a subreaper, and are killed in the next round.
// It is for the end of a process's life: it reaps children that os/exec
// may be waiting for.
func KillDescendants() {
	self := os.Getpid()
	pgid := syscall.Getpgrp()
	for range 50 {
		all, err := procfs.Default.Stats()
		found := err != nil // could not list: look again
		for _, st := range all {
			if st.Pid == self || (st.PGID != pgid && st.PPID != self) {
				continue
			}
			if st.State == 'Z' {
				if st.PPID == self {
					var ws syscall.WaitStatus
					_, _ = syscall.Wait4(st.Pid, &ws, syscall.WNOHANG, nil)
				}
				continue
			}
			found = true
			_ = syscall.Kill(st.Pid, syscall.SIGKILL)
		}
		if !found {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}
