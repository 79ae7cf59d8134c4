package runtime

import (
	"context"
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/procfs"
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
	all, _ := procfs.Default.Stats()
	var out []int
	for _, st := range all {
		if st.PPID == os.Getpid() && st.Live() {
			out = append(out, st.Pid)
		}
	}
	return out
}
