//go:build linux

package proc

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fabric-runtime/fabric/internal/procfs"
)

// Polling bounds while waiting for a process group to empty. Only the
// group's emptiness is polled; the leader's exit is a channel.
const (
	pollMin = 5 * time.Millisecond
	pollMax = 50 * time.Millisecond
)

// Process is a child started by Start, the leader of its own process group.
// Its methods are safe for concurrent use.
type Process struct {
	pid       int    // also the process group id
	startTime uint64 // field 22 of /proc/<pid>/stat at start
	grace     time.Duration
	marker    string    // Spec.EnvMarker
	root      procfs.FS // procfs.Default outside tests

	exitCtx    context.Context // cancelled when the leader is reaped and stdio copied
	done       <-chan struct{} // exitCtx.Done()
	exit       ExitInfo        // written before exitCtx is cancelled
	markExited context.CancelFunc

	// mu orders signals against reaping. While exited is false the leader
	// has not been reaped (it may be a zombie), so its pid, and with it the
	// process group id, cannot have been reused: a group signal sent under
	// mu reaches only our group.
	mu     sync.Mutex
	exited bool

	// stopSem admits one Stop sequence at a time; it guards the fields
	// below.
	stopSem    chan struct{}
	termSentAt time.Time // when Stop sent SIGTERM; the grace period runs from here
	stopped    bool      // the leader was reaped and the group found empty
}

// Start starts the child described by spec in its own process group.
//
// ctx bounds only the start, not the life of the process: it is checked
// before forking (fork and exec themselves are not interruptible). Children
// are forked one at a time from the spawner's thread (see the package
// documentation); ctx also ends a wait for it. When Start
// returns an error no process is left running. Otherwise the caller owns the
// group and must call Stop, even after Done is closed: the child may have
// left processes in its group.
func Start(ctx context.Context, spec Spec) (*Process, error) {
	if spec.Path == "" {
		return nil, errors.New("proc: start: empty Path")
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("proc: start %s: %w", spec.Path, err)
	}
	cmd := exec.Command(spec.Path, spec.Args...)
	cmd.Dir = spec.Dir
	cmd.Env = spec.Env
	cmd.Stdin = spec.Stdin
	cmd.Stdout = spec.Stdout
	cmd.Stderr = spec.Stderr
	cmd.ExtraFiles = spec.ExtraFiles
	cmd.WaitDelay = spec.waitDelay()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}

	p := &Process{
		grace:   spec.grace(),
		marker:  spec.EnvMarker,
		root:    procfs.Default,
		stopSem: make(chan struct{}, 1),
	}
	p.exitCtx, p.markExited = context.WithCancel(context.Background())
	p.done = p.exitCtx.Done()
	if err := forker.start(ctx, cmd); err != nil {
		return nil, fmt.Errorf("proc: start %s: %w", spec.Path, err)
	}
	cmd.Env = nil // the child has it; wait need not pin it for the child's life
	// The child holds a reference on the spawner until it is reaped.
	pid := cmd.Process.Pid
	st, err := p.root.Stat(pid)
	if err != nil {
		// Without a start time the pid cannot be guarded against reuse; do
		// not keep the child. It is not reaped yet, so the group is ours.
		_ = unix.Kill(-pid, unix.SIGKILL)
		_ = cmd.Wait()
		forker.release()
		return nil, fmt.Errorf("proc: start %s: read start time: %w", spec.Path, err)
	}
	p.pid, p.startTime = pid, st.StartTime
	go p.wait(cmd)
	return p, nil
}

// wait waits for the child to exit, records that under mu, and only then
// reaps it. It is the only caller of cmd.Wait once Start has returned, and it
// cancels p.exitCtx (closing p.done) as its last act. It blocks no OS thread
// while the child runs: awaitExit parks it in the netpoller.
func (p *Process) wait(cmd *exec.Cmd) {
	defer p.markExited()
	defer forker.release() // after the reap: the child no longer needs the spawner's thread
	awaitExit(p.pid)
	p.mu.Lock()
	p.exited = true // from here on, cmd.Wait may reap the pid at any time
	p.mu.Unlock()
	// The child has exited, so Wait reaps it without blocking and then waits
	// (on channels, bounded by WaitDelay) for the stdio copying goroutines.
	p.exit = exitInfo(cmd.Wait(), cmd.ProcessState)
}

// awaitExit returns once pid, an unreaped child of this process, has exited
// and can be reaped. It does not reap it. It waits for a pidfd of the child to
// become readable in the netpoller, so it holds no OS thread; if no pidfd can
// be had (a kernel before 5.3, or no descriptor left) it falls back to a
// waitid call that blocks a thread.
func awaitExit(pid int) {
	if err := pollExit(pid); err != nil {
		blockExit(pid)
	}
}

// pollExit waits for pid to exit through a non-blocking pidfd registered with
// the netpoller. A pidfd becomes readable when the process has exited and can
// be reaped (for a group leader: once every thread has exited, as for
// waitid), and stays readable after it is reaped. The pidfd is opened here
// and closed before returning. It is not a dup of the pidfd os/exec keeps for
// its own wait: a dup would share O_NONBLOCK with it, and os/exec's waitid
// could then fail with EAGAIN instead of waiting.
func pollExit(pid int) error {
	// pidfd_open is race-free here: the pid cannot be reused before we reap it.
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return err
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return err
	}
	// NewFile registers a non-blocking descriptor with the netpoller.
	f := os.NewFile(uintptr(fd), "pidfd")
	defer f.Close()
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	// Read calls the function, and while it returns false parks the
	// goroutine until the poller reports the pidfd readable (edge-triggered:
	// the descriptor was registered above, so an exit at any point after
	// that is not missed), then calls it again. On an unpollable descriptor
	// Read fails instead of blocking, and the caller falls back.
	return rc.Read(func(uintptr) bool { return exitedNow(pid) })
}

// exitedNow reports whether pid has exited and can be reaped, without
// reaping it. Errors (such as ECHILD if something else reaped the child) end
// the wait too: cmd.Wait then reports what happened.
func exitedNow(pid int) bool {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return true
		}
		// With WNOHANG and nothing to report the kernel leaves si_signo 0.
		return info.Signo == int32(unix.SIGCHLD)
	}
}

// blockExit blocks the calling goroutine and its OS thread until pid has
// exited, without reaping it.
func blockExit(pid int) {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err != unix.EINTR {
			return // on any other error cmd.Wait reports what happened
		}
	}
}

func exitInfo(err error, st *os.ProcessState) ExitInfo {
	if _, ok := errors.AsType[*exec.ExitError](err); ok {
		err = nil // the status is in Code and Signal
	}
	if st == nil {
		return ExitInfo{Code: -1, Err: err}
	}
	info := ExitInfo{Code: st.ExitCode(), Err: err}
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		info.Signal = unix.SignalName(ws.Signal())
		if info.Signal == "" {
			info.Signal = fmt.Sprintf("signal %d", int(ws.Signal()))
		}
	}
	return info
}

// Pid returns the child's pid, which is also its process group id.
func (p *Process) Pid() int { return p.pid }

// Done returns a channel closed when the child has exited, has been reaped
// and its stdio copying has finished (bounded by Spec.WaitDelay). Once it is
// closed, the goroutine that waited for the child has finished.
func (p *Process) Done() <-chan struct{} { return p.done }

// Exited returns a context cancelled when Done is closed, so that a watch of
// the child's exit (context.AfterFunc) needs no goroutine of its own.
func (p *Process) Exited() context.Context { return p.exitCtx }

// ExitState returns how the child ended, and false while Done is not closed.
func (p *Process) ExitState() (ExitInfo, bool) {
	select {
	case <-p.done:
		return p.exit, true
	default:
		return ExitInfo{}, false
	}
}

// Signal sends sig to every process in the child's group. Once the child has
// exited it sends nothing and returns an error satisfying
// errors.Is(err, os.ErrProcessDone); use Stop or Kill to reach what is left
// of the group.
func (p *Process) Signal(sig os.Signal) error {
	s, ok := sig.(syscall.Signal)
	if !ok {
		return fmt.Errorf("proc: signal %v: not a syscall.Signal", sig)
	}
	return p.signalGroup(s, false)
}

// Kill sends SIGKILL to every process in the child's group, including any
// left after the child itself exited, and returns without waiting. It
// returns an error satisfying errors.Is(err, os.ErrProcessDone) when no
// process was left, and ErrPidReused when the group id now belongs to
// another process.
func (p *Process) Kill() error { return p.signalGroup(unix.SIGKILL, true) }

// signalGroup sends sig to the process group. With afterExit false it
// refuses once the leader has exited. After the leader has exited (it may be
// reaped and its pid reused) the group is signalled only when no process now
// holds the pid under a different start time.
func (p *Process) signalGroup(sig syscall.Signal, afterExit bool) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.exited {
		if !afterExit {
			return fmt.Errorf("proc: signal pid %d: %w", p.pid, os.ErrProcessDone)
		}
		reused, err := p.pidReused()
		if err != nil {
			return err
		}
		if reused {
			return fmt.Errorf("proc: signal group %d: %w", p.pid, ErrPidReused)
		}
	}
	if err := unix.Kill(-p.pid, sig); err != nil {
		if errors.Is(err, unix.ESRCH) {
			return fmt.Errorf("proc: signal group %d: %w", p.pid, os.ErrProcessDone)
		}
		return fmt.Errorf("proc: signal group %d: %w", p.pid, err)
	}
	return nil
}

// pidReused reports whether a process other than our child now holds its
// pid. If no process holds it, any process still in the group is one our
// child left behind: a group id cannot be taken over while the group has
// members, and a new group with this id needs a new process with this pid.
func (p *Process) pidReused() (bool, error) {
	st, err := p.root.Stat(p.pid)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return st.StartTime != p.startTime, nil
}

// GroupPids returns, in ascending order, the live (not zombie) processes in
// the child's process group, including the child while it runs. It returns
// nothing once the group id has been reused by another process.
func (p *Process) GroupPids() ([]int, error) {
	p.mu.Lock()
	exited := p.exited
	p.mu.Unlock()
	if exited {
		reused, err := p.pidReused()
		if err != nil {
			return nil, err
		}
		if reused {
			return nil, nil
		}
	}
	return p.root.GroupPids(p.pid)
}

// OwnsListener reports whether a process in the child's group holds a TCP
// socket listening on port, on any address.
func (p *Process) OwnsListener(port uint16) (bool, error) {
	ls, err := p.root.ListeningTCP()
	if err != nil {
		return false, err
	}
	inodes := make(map[uint64]bool)
	for _, l := range ls {
		if l.Addr.Port() == port {
			inodes[l.Inode] = true
		}
	}
	if len(inodes) == 0 {
		return false, nil
	}
	pids, err := p.GroupPids()
	if err != nil {
		return false, err
	}
	var errs []error
	for _, pid := range pids {
		ok, err := p.root.HoldsSocket(pid, func(n uint64) bool { return inodes[n] })
		if ok {
			return true, nil
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	return false, errors.Join(errs...)
}

// Stop ends the child's whole process group: SIGTERM to the group, a wait of
// up to the grace period (cut short when ctx is done), SIGKILL to the group,
// and a wait of up to KillWait, re-sending SIGKILL to stragglers, until the
// child has been reaped and no live process is left in the group. The wait
// after SIGKILL does not end with ctx, so Stop may return up to KillWait
// after ctx is done.
//
// Stop returns nil only when nothing is left running. It is idempotent and
// safe for concurrent use: calls are serialized, a call made after success
// returns nil at once, and a repeated call does not restart the grace
// period. A call that is kept waiting for another returns ctx's error when
// ctx is done first.
func (p *Process) Stop(ctx context.Context) error {
	select {
	case p.stopSem <- struct{}{}:
	default:
		select {
		case p.stopSem <- struct{}{}:
		case <-ctx.Done():
			return fmt.Errorf("proc: stop pid %d: %w", p.pid, ctx.Err())
		}
	}
	defer func() { <-p.stopSem }()
	if p.stopped {
		return nil
	}
	if p.termSentAt.IsZero() {
		p.termSentAt = time.Now()
		// Errors are not final: what is left is checked below.
		_ = p.signalGroup(unix.SIGTERM, true)
	}
	ok, _, err := p.awaitGone(ctx, time.Until(p.termSentAt.Add(p.grace)), 0)
	if err == nil && !ok {
		var left []int
		ok, left, err = p.awaitGone(context.Background(), KillWait, unix.SIGKILL)
		if err == nil && !ok {
			if _, reaped := p.ExitState(); !reaped {
				return fmt.Errorf("proc: stop pid %d: %w: not reaped %v after SIGKILL", p.pid, ErrStillRunning, KillWait)
			}
			return fmt.Errorf("proc: stop pid %d: %w: pids %v left %v after SIGKILL", p.pid, ErrStillRunning, left, KillWait)
		}
	}
	if err != nil {
		return fmt.Errorf("proc: stop pid %d: %w", p.pid, err)
	}
	if p.marker != "" && p.root == procfs.Default {
		KillByEnv(p.marker, KillWait)
	}
	p.stopped = true
	return nil
}

// awaitGone waits until the child has been reaped and its group has no live
// process, for at most d or until ctx is done, and reports whether that
// happened and which pids were last seen in the group. With sig non-zero it
// sends sig to the group before every check.
func (p *Process) awaitGone(ctx context.Context, d time.Duration, sig syscall.Signal) (bool, []int, error) {
	deadline := time.NewTimer(max(d, 0))
	defer deadline.Stop()
	tick := time.NewTimer(pollMin)
	defer tick.Stop()
	done := p.done
	poll := pollMin
	var left []int
	for {
		if sig != 0 {
			_ = p.signalGroup(sig, true) // errors are not final: what is left is checked below
		}
		select {
		case <-p.done:
			pids, err := p.GroupPids()
			if err != nil {
				return false, nil, err
			}
			if len(pids) == 0 {
				return true, nil, nil
			}
			left = pids
		default:
		}
		select {
		case <-ctx.Done():
			return false, left, nil
		case <-deadline.C:
			return false, left, nil
		case <-done:
			done = nil // check the group now; poll from here on
		case <-tick.C:
			poll = min(2*poll, pollMax)
		}
		tick.Reset(poll)
	}
}
