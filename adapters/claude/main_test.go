package claude_test

import (
	"bufio"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fabric-runtime/fabric/adapterkit/adaptertest"
	"github.com/fabric-runtime/fabric/adapters/bundled"
	"github.com/fabric-runtime/fabric/internal/procfs"
)

// TestMain doubles as a scripted claude (fake_test.go) and as the adapter
// host of any bundled adapter (the Claude adapter's included).
func TestMain(m *testing.M) { adaptertest.Main(m, fakeHarness, bundled.ServeHost) }

// claudeProcess finds the claude process of a runtime through its
// environment: its CLAUDE_CONFIG_DIR is under stateDir. It returns the
// pid, the process group and the TMPDIR it was given.
func claudeProcess(t testing.TB, stateDir string) (pid, pgid int, tmpdir string) {
	t.Helper()
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil {
			continue
		}
		var cfgDir, tmp string
		for _, kv := range strings.Split(string(data), "\x00") {
			if v, ok := strings.CutPrefix(kv, "CLAUDE_CONFIG_DIR="); ok {
				cfgDir = v
			}
			if v, ok := strings.CutPrefix(kv, "TMPDIR="); ok {
				tmp = v
			}
		}
		if cfgDir == "" || !strings.HasPrefix(cfgDir, stateDir+string(filepath.Separator)) {
			continue
		}
		if _, g, ok := procStat(p); ok {
			return p, g, tmp
		}
	}
	t.Fatalf("no claude process with its config under %s", stateDir)
	return 0, 0, ""
}

// procStat reads the state and process group of pid.
func procStat(pid int) (state byte, pgrp int, ok bool) {
	st, err := procfs.Default.Stat(pid)
	return st.State, st.PGID, err == nil
}

// groupMembers lists the live processes of process group pgid.
func groupMembers(pgid int) []int {
	pids, _ := procfs.Default.GroupPids(pgid)
	return pids
}

// rssSampler samples the summed RSS of a host process and a process
// group every 25 ms and keeps the peak.
type rssSampler struct {
	stop chan struct{}
	done chan struct{}
	peak int64 // KiB
}

func sampleRSS(hostPid, pgid int) *rssSampler {
	s := &rssSampler{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		tick := time.NewTicker(25 * time.Millisecond)
		defer tick.Stop()
		for {
			var sum int64
			pids := groupMembers(pgid)
			if !slices.Contains(pids, hostPid) {
				pids = append(pids, hostPid)
			}
			for _, p := range pids {
				sum += rssKiB(p)
			}
			s.peak = max(s.peak, sum)
			select {
			case <-s.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return s
}

// Peak stops sampling and returns the peak in MiB.
func (s *rssSampler) Peak() float64 {
	close(s.stop)
	<-s.done
	return float64(s.peak) / 1024
}

func rssKiB(pid int) int64 {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}
