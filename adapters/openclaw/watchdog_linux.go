package openclaw

import (
	"os"
	"os/exec"
	"syscall"
	"time"
)

// watchdogScript waits for its stdin to close, which happens when the host
// closes it at stop or when the host dies however it dies, then kills every
// process whose environment holds the marker "$1" (a whole NAME=value
// entry), until none is left (at most about 2.5 s). It is how the
// Gateway's helpers die with a host that was killed: the Gateway itself
// dies with its parent (Pdeathsig), but its workers and its spawn broker
// (a session of its own) would otherwise be orphaned.
const watchdogScript = `read -r _ || :
n=0
while [ "$n" -lt 25 ]; do
  pids=$(grep -lzxF -- "$1" /proc/[0-9]*/environ 2>/dev/null | sed -n 's|^/proc/\([0-9]*\)/environ$|\1|p')
  [ -z "$pids" ] && exit 0
  kill -9 $pids 2>/dev/null
  n=$((n+1))
  sleep 0.1
done`

// watchdog is the started watchdog process.
type watchdog struct {
	stdin *os.File
	done  chan struct{}
}

// startWatchdog starts the watchdog for marker in a process group of its
// own (so that killing the host's group does not kill it) and without a
// parent-death signal (it must outlive the host). Its environment holds
// only PATH, never the marker.
func startWatchdog(marker string) (*watchdog, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("/bin/sh", "-c", watchdogScript, "fabric-openclaw-watchdog", marker)
	cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin"}
	cmd.Stdin = r
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		r.Close()
		w.Close()
		return nil, err
	}
	r.Close()
	wd := &watchdog{stdin: w, done: make(chan struct{})}
	go func() { // owned by wd: stop waits for it
		_ = cmd.Wait()
		close(wd.done)
	}()
	return wd, nil
}

// stop closes the watchdog's stdin, which makes it sweep (finding nothing
// after a clean stop) and exit, and waits for it at most wait; after that
// it is killed.
func (wd *watchdog) stop(wait time.Duration) {
	if wd == nil {
		return
	}
	wd.stdin.Close()
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-wd.done:
	case <-t.C:
		<-wd.done // the script ends by itself within about 2.5 s
	}
}
