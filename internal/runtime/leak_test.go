package runtime

import (
	"context"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fabric-runtime/fabric/contract"
)

// TestNoLeaksAcrossCycles runs start/invoke/stop cycles and checks that no
// process, file descriptor, goroutine or file is left behind. FABRIC_LEAK_CYCLES
// overrides the count (bench/leak.sh runs 10,000).
func TestNoLeaksAcrossCycles(t *testing.T) {
	cycles := 1000
	if testing.Short() {
		cycles = 50
	}
	if s := os.Getenv("FABRIC_LEAK_CYCLES"); s != "" {
		cycles, _ = strconv.Atoi(s)
	}
	opts := testOptions(t)
	plans := []*contract.RunPlan{
		testPlan(t, scriptedV2, map[string]any{"events": 1}),
		testPlan(t, scriptedV1, nil),
	}
	// Warm up so lazily created runtime resources are not counted.
	cycle(t, plans[0], opts)
	fds := openFDs(t)
	goroutines := runtime.NumGoroutine()
	begin := time.Now()
	for i := range cycles {
		cycle(t, plans[i%2], opts)
	}
	t.Logf("%d cycles in %s (%.1f ms each)", cycles, time.Since(begin), float64(time.Since(begin).Milliseconds())/float64(cycles))
	if kids := children(t); len(kids) > 0 {
		t.Fatalf("child processes left: %v", kids)
	}
	if after := openFDs(t); after > fds {
		t.Fatalf("file descriptors: %d before, %d after", fds, after)
	}
	// Goroutines wind down asynchronously after stop; give them a moment.
	for deadline := time.Now().Add(5 * time.Second); runtime.NumGoroutine() > goroutines && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > goroutines {
		t.Fatalf("goroutines: %d before, %d after", goroutines, n)
	}
	assertNoHomes(t, opts.StateDir)
}

func cycle(t *testing.T, p *contract.RunPlan, opts Options) {
	t.Helper()
	ctx := context.Background()
	rt, err := Start(ctx, p, opts)
	if err != nil {
		t.Fatal(err)
	}
	res, err := rt.Invoke(ctx, contract.RunRequest{Input: "x"}, InvokeOptions{})
	if err != nil || res.Status != contract.StatusSucceeded {
		t.Fatalf("invoke %+v %v", res, err)
	}
	if _, err := rt.Stop(ctx); err != nil {
		t.Fatal(err)
	}
}

func openFDs(t *testing.T) int {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(entries)
}

// children lists live processes whose parent is this test process.
func children(t *testing.T) []int {
	self := strconv.Itoa(os.Getpid())
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(data)
		i := strings.LastIndexByte(s, ')')
		f := strings.Fields(s[i+2:])
		if len(f) > 1 && f[1] == self && f[0] != "Z" {
			out = append(out, pid)
		}
	}
	return out
}
