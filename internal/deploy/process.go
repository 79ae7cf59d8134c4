package deploy

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/agentctl"
	"github.com/fabric-runtime/fabric/internal/procfs"
)

// supervisorStartWait bounds the wait for a new supervisor's socket.
const supervisorStartWait = 15 * time.Second

// startTicks reads a process's start time, 0 when it is gone.
func startTicks(pid int) uint64 {
	st, err := procfs.Default.Stat(pid)
	if err != nil || !st.Live() {
		return 0
	}
	return st.StartTime
}

// alive reports whether the recorded supervisor process still runs (the
// same process: its start time matches).
func alive(r *SupervisorRecord) bool {
	return r != nil && r.Pid > 0 && r.StartTicks != 0 && startTicks(r.Pid) == r.StartTicks
}

// answers reports whether a serve answers on the socket.
func answers(ctx context.Context, socket string) bool {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	c := &agentctl.Client{Socket: socket}
	resp, err := c.Do(ctx, &agentctl.Request{Operation: agentctl.OpCheck})
	return err == nil && resp != nil
}

// scrubbedEnv is this process's environment without the variables the
// document references as credentials: the supervisor receives their
// values over its socket and keeps them in memory only, so that no
// process it starts inherits them.
func scrubbedEnv(refs []contract.CredentialRef) []string {
	drop := map[string]bool{}
	for _, c := range refs {
		if c.Env != "" {
			drop[c.Env] = true
		}
	}
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if !drop[k] {
			env = append(env, kv)
		}
	}
	return env
}

// startSupervisor starts `fabric serve --state-dir DIR` detached (its own
// session, stdin from /dev/null, output to supervisor.log), so that it is
// no child of apply's shell, and waits until its socket answers.
func startSupervisor(ctx context.Context, o *Options, dir, socket string, refs []contract.CredentialRef) (*SupervisorRecord, error) {
	logf, err := os.OpenFile(filepath.Join(dir, SupervisorLog), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, &Error{Code: CodeStateUnwritable, Message: err.Error()}
	}
	defer logf.Close()
	cmd := exec.Command(o.Executable, "serve", "--state-dir", dir, "--socket", socket)
	cmd.Env = scrubbedEnv(refs)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return nil, &Error{Code: CodeSupervisorStartFailed, Message: fmt.Sprintf("cannot start %s serve: %v", o.Executable, err)}
	}
	pid := cmd.Process.Pid
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	rec := &SupervisorRecord{Kind: contract.SupervisorProcess, Socket: socket, Pid: pid, StartedAtMillis: time.Now().UnixMilli()}
	deadline := time.Now().Add(supervisorStartWait)
	pause := 2 * time.Millisecond
	for {
		select {
		case err := <-exited:
			return nil, &Error{Code: CodeSupervisorStartFailed, Message: fmt.Sprintf("the supervisor exited before serving (%v); see %s", err, filepath.Join(dir, SupervisorLog))}
		default:
		}
		if answers(ctx, socket) {
			if st, err := supervisorStatus(ctx, socket); err != nil || st.Supervisor.Pid != pid {
				_ = syscall.Kill(pid, syscall.SIGKILL)
				return nil, &Error{Code: CodeSupervisorStartFailed, Message: fmt.Sprintf("another process answers on %s; see %s", socket, filepath.Join(dir, SupervisorLog))}
			}
			// Its start time, read once it serves: fabric serve replaces itself
			// with fabric-serve, and while a multi-threaded process execs, /proc
			// shows it as a zombie for an instant (its start time is kept), so
			// a read then gives 0 and the record would never match the
			// supervisor again (destroy would leave it running).
			rec.StartTicks = startTicks(pid)
			// The child stays ours until this process exits; it is in its own
			// session, so neither the shell's hangup nor apply's exit reaches it.
			_ = cmd.Process.Release()
			return rec, nil
		}
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			return nil, &Error{Code: CodeSupervisorStartFailed, Message: fmt.Sprintf("the supervisor did not answer on %s within %v; see %s", socket, supervisorStartWait, filepath.Join(dir, SupervisorLog))}
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			_ = syscall.Kill(pid, syscall.SIGKILL)
			return nil, ctx.Err()
		case <-t.C:
		}
		pause = min(2*pause, 100*time.Millisecond)
	}
}

// stopSupervisor sends SIGTERM to the recorded supervisor and waits for it
// to exit (SIGKILL after grace).
func stopSupervisor(r *SupervisorRecord, grace time.Duration) error {
	if !alive(r) {
		return nil
	}
	if err := syscall.Kill(r.Pid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	deadline := time.Now().Add(grace)
	for alive(r) {
		if time.Now().After(deadline) {
			_ = syscall.Kill(r.Pid, syscall.SIGKILL)
			deadline = time.Now().Add(5 * time.Second)
			for alive(r) && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			if alive(r) {
				return fmt.Errorf("supervisor pid %d did not exit", r.Pid)
			}
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return nil
}
