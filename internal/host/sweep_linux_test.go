//go:build linux

package host

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/hostproto"
	"github.com/fabric-runtime/fabric/internal/procfs"
	"github.com/fabric-runtime/fabric/internal/testsupport/testproc"
)

// A host that is SIGKILLed leaves nothing that carries its FABRIC_HOME,
// even what left its process group, and without waiting for Terminate:
// the core sweeps the host's tree as soon as the host has exited. (An ACP
// host is the subreaper of its agent's tree; when it is SIGKILLed, the
// core is what is left to clean up.)
func TestKilledHostsTreeIsSwept(t *testing.T) {
	home := t.TempDir()
	pidFile := filepath.Join(t.TempDir(), "pid")
	h, err := Launch(context.Background(), Spec{
		Path: "sh", Args: []string{"-c", "setsid sleep 60 & echo $! > " + pidFile + "; exec sleep 60"},
		Env:      append(os.Environ(), hostproto.EnvHome+"="+home),
		Protocol: contract.HostProtocolV2, Home: home,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Terminate(context.Background()) })
	var escaped int
	testproc.Eventually(t, 10*time.Second, "the host's detached child", func() bool {
		b, _ := os.ReadFile(pidFile)
		escaped, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		return escaped > 0
	})
	t.Cleanup(func() { _ = syscall.Kill(escaped, syscall.SIGKILL) })
	if err := syscall.Kill(h.proc.Pid(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-h.Exited()
	testproc.Eventually(t, 10*time.Second, "the detached child to be killed", func() bool {
		st, err := procfs.Default.Stat(escaped)
		return err != nil || !st.Live()
	})
}
