//go:build linux

package server

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fabric-runtime/fabric/internal/agentctl"
)

// LockFile is the name of the lock a serve holds in its socket's directory
// for its whole life: one serve per directory, since the marker and the
// journal live there too.
const LockFile = "agent-ctl.lock"

// maxSocketPath is the room in sockaddr_un.sun_path, less the NUL.
const maxSocketPath = 107

// lockDir takes the directory's serve lock without waiting. The file keeps
// the holder's pid for error messages.
func lockDir(dir string) (*os.File, error) {
	path := filepath.Join(dir, LockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, &agentctl.Error{Code: agentctl.CodeSocketUnavailable, Message: fmt.Sprintf("cannot open the serve lock %s: %v", path, err)}
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		holder := ""
		if b, rerr := os.ReadFile(path); rerr == nil && len(b) > 0 {
			holder = " (pid " + strings.TrimSpace(string(b)) + ")"
		}
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, &agentctl.Error{Code: agentctl.CodeServeAlreadyRunning, Message: fmt.Sprintf("another fabric-agent-ctl serve%s owns %s", holder, dir)}
		}
		return nil, &agentctl.Error{Code: agentctl.CodeSocketUnavailable, Message: fmt.Sprintf("cannot lock %s: %v", path, err)}
	}
	_ = f.Truncate(0)
	_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return f, nil
}

// listenSocket binds the control socket with mode 0600 from the start (the
// umask is tightened around bind, so the socket is never briefly wider).
// A live serve on the path is refused; a stale socket file is removed.
func listenSocket(path string) (*net.UnixListener, error) {
	unavailable := func(format string, args ...any) error {
		return &agentctl.Error{Code: agentctl.CodeSocketUnavailable, Message: fmt.Sprintf(format, args...)}
	}
	if len(path) > maxSocketPath {
		return nil, unavailable("socket path %s is %d bytes; Unix sockets allow at most %d: choose a shorter --socket", path, len(path), maxSocketPath)
	}
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode().Type() != fs.ModeSocket {
			return nil, unavailable("%s exists and is not a socket", path)
		}
		c, err := net.DialTimeout("unix", path, time.Second)
		if err == nil {
			c.Close()
			return nil, &agentctl.Error{Code: agentctl.CodeServeAlreadyRunning, Message: fmt.Sprintf("a serve already answers on %s", path)}
		}
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, unavailable("cannot remove the stale socket %s: %v", path, err)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, unavailable("%s: %v", path, err)
	}
	old := syscall.Umask(0o177)
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	syscall.Umask(old)
	if err != nil {
		return nil, unavailable("cannot listen on %s: %v", path, err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, unavailable("chmod %s: %v", path, err)
	}
	return ln, nil
}

// peerCred returns the connecting process's credentials.
func peerCred(c *net.UnixConn) (*unix.Ucred, error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return nil, err
	}
	var cred *unix.Ucred
	var cerr error
	if err := rc.Control(func(fd uintptr) {
		cred, cerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return nil, err
	}
	return cred, cerr
}

// hungUp reports whether the peer closed its end entirely. A peer that only
// shut down its writing side (shutdown(SHUT_WR), as some one-shot clients
// do after sending) is still waiting for the answer: a Unix stream socket
// then signals POLLRDHUP, and POLLHUP only once both directions are shut.
func hungUp(c *net.UnixConn) bool {
	rc, err := c.SyscallConn()
	if err != nil {
		return false
	}
	hup := false
	_ = rc.Control(func(fd uintptr) {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN | unix.POLLRDHUP}}
		if n, err := unix.Poll(fds, 0); err == nil && n > 0 {
			hup = fds[0].Revents&(unix.POLLHUP|unix.POLLERR) != 0
		}
	})
	return hup
}

// watchHangup calls fn once when the peer of c closes the connection,
// until the returned stop is called (stop waits for the watcher).
func watchHangup(c *net.UnixConn, fn func()) (stop func()) {
	done := make(chan struct{})
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		buf := make([]byte, 512)
		for {
			// Bytes after the request line are ignored; EOF or an error
			// ends the wait.
			if _, err := c.Read(buf); err != nil {
				break
			}
		}
		if hungUp(c) {
			fn()
			return
		}
		// Half-closed (or our own deadline): poll until stopped.
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if hungUp(c) {
					fn()
					return
				}
			}
		}
	}()
	return func() {
		close(done)
		_ = c.SetReadDeadline(time.Unix(1, 0))
		<-exited
	}
}
