// Command idle starts N idle runtimes of the bundled scripted adapter (Go
// hosts re-executed from the fabric binary), then reports the core's RSS
// and the hosts' RSS and PSS, and stops them all, checking nothing is left.
//
//	go build -o bin/fabric-host ./cmd/fabric-host && go run ./bench/idle -n 1000 -host bin/fabric-host
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	fabric "github.com/fabric-runtime/fabric"
	"github.com/fabric-runtime/fabric/adapters/bundled"
)

const config = `
schema_version: fabric.agent/v1alpha1
metadata: {name: idle}
runtime: {}
harness: {adapter_id: fabric.scripted, settings: {response: ok}}
`

func main() {
	n := flag.Int("n", 1000, "number of runtimes")
	bin := flag.String("host", "bin/fabric-host", "binary that hosts the bundled Go adapter (bin/fabric-host, or bin/fabric to re-execute the CLI)")
	parallel := flag.Int("parallel", 8, "runtimes started at once")
	heap := flag.String("heapprofile", "", "write a heap profile of the core with every runtime idle to this file (go tool pprof -sample_index=inuse_space)")
	goroutines := flag.Bool("goroutines", false, "print the core's goroutines with every runtime idle, grouped by stack")
	hold := flag.Duration("hold", 0, "after reporting, keep every runtime idle this long before stopping them (to inspect a host's /proc/<pid>/smaps or pagemap); the hosts' pids are printed")
	follow := flag.Bool("follow", false, "start followable runtimes (fabric.WithFollowableTurns): each idle runtime keeps its warm-up turn's event log")
	flag.Parse()
	if *heap != "" {
		runtime.MemProfileRate = 512 // every runtime's few kilobytes, not one sample per 512 KiB
	}
	if err := run(*n, *bin, *parallel, *heap, *goroutines, *follow, *hold); err != nil {
		fmt.Fprintln(os.Stderr, "idle:", err)
		os.Exit(1)
	}
}

func run(n int, bin string, parallel int, heapProfile string, goroutines, follow bool, hold time.Duration) error {
	ctx := context.Background()
	state, err := os.MkdirTemp("", "fabric-idle-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(state)
	client := fabric.New(fabric.WithBundledAdapters(bundled.Adapters()), fabric.WithHostBinary(bin), fabric.WithStateDir(state))
	cfg, err := client.ParseConfig([]byte(config), "idle.yaml", fabric.LoadOptions{})
	if err != nil {
		return err
	}
	runtime.GC()
	var opts []fabric.StartOption
	if follow {
		opts = append(opts, fabric.WithFollowableTurns())
	}
	baseRSS := rssKiB("self")
	baseGoroutines := runtime.NumGoroutine()
	var base runtime.MemStats
	runtime.ReadMemStats(&base)
	rts := make([]*fabric.Runtime, n)
	sem := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	begin := time.Now()
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			rt, err := client.StartRuntime(ctx, cfg, opts...)
			if err == nil {
				_, err = rt.Invoke(ctx, "warm up")
			}
			mu.Lock()
			defer mu.Unlock()
			if err != nil && firstErr == nil {
				firstErr = err
			}
			rts[i] = rt
		}()
	}
	wg.Wait()
	startAll := time.Since(begin)
	defer func() {
		for _, rt := range rts {
			if rt != nil {
				rt.Stop(ctx)
			}
		}
	}()
	if firstErr != nil {
		return firstErr
	}
	time.Sleep(2 * time.Second) // let hosts settle to their idle state
	runtime.GC()
	coreRSS := rssKiB("self")
	if heapProfile != "" {
		if err := writeHeapProfile(heapProfile); err != nil {
			return err
		}
	}
	if goroutines {
		if err := pprof.Lookup("goroutine").WriteTo(os.Stdout, 1); err != nil {
			return err
		}
	}
	var rss, pss, anon, file []int
	for _, rt := range rts {
		pid := strconv.Itoa(rt.HostPid())
		rss = append(rss, rssKiB(pid))
		pss = append(pss, pssKiB(pid))
		anon = append(anon, statusField(pid, "RssAnon:"))
		file = append(file, statusField(pid, "RssFile:"))
	}
	fmt.Printf("runtimes: %d (started in %s, %d at a time)\n", n, startAll.Round(time.Millisecond), parallel)
	fmt.Printf("core RSS: %.1f MiB (%.1f MiB before starting)\n", mib(coreRSS), mib(baseRSS))
	fmt.Printf("core threads: %d\n", statusField("self", "Threads:"))
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	fmt.Printf("core goroutines: %d (%.2f per runtime); heap in use %.1f MiB (live objects %.1f MiB), stacks %.1f MiB, heap idle not released %.1f MiB, runtime metadata %.1f MiB\n",
		runtime.NumGoroutine(), float64(runtime.NumGoroutine()-baseGoroutines)/float64(n), mibB(ms.HeapInuse), mibB(ms.HeapAlloc), mibB(ms.StackInuse), mibB(ms.HeapIdle-ms.HeapReleased), mibB(metaSys(&ms)))
	per := func(now, before uint64) float64 { return (float64(now) - float64(before)) / 1024 / float64(n) }
	fmt.Printf("per runtime: core RSS %.1f KiB: heap in use %.1f KiB (live objects %.1f KiB), stacks %.1f KiB, runtime metadata %.1f KiB\n",
		float64(coreRSS-baseRSS)/float64(n), per(ms.HeapInuse, base.HeapInuse), per(ms.HeapAlloc, base.HeapAlloc), per(ms.StackInuse, base.StackInuse), per(metaSys(&ms), metaSys(&base)))
	// What an idle core settles to once the heap freed by the starts has
	// gone back to the OS (the forced GC every two minutes and the
	// scavenger get there on their own): the memory the runtimes hold.
	debug.FreeOSMemory()
	settled := rssKiB("self")
	runtime.ReadMemStats(&ms)
	fmt.Printf("core RSS settled (debug.FreeOSMemory): %.1f MiB, %.1f KiB per runtime; live objects %.1f KiB per runtime\n",
		mib(settled), float64(settled-baseRSS)/float64(n), per(ms.HeapAlloc, base.HeapAlloc))
	fmt.Printf("host RSS: median %.2f MiB, max %.2f MiB\n", mib(median(rss)), mib(maxOf(rss)))
	fmt.Printf("host RSS split: median %.2f MiB anonymous (heap, stacks, written data), %.2f MiB of the binary's mapped pages (shared)\n", mib(median(anon)), mib(median(file)))
	fmt.Printf("host PSS: median %.2f MiB, max %.2f MiB (shared pages divided among hosts)\n", mib(median(pss)), mib(maxOf(pss)))
	if hold > 0 {
		pids := make([]string, len(rts))
		for i, rt := range rts {
			pids[i] = strconv.Itoa(rt.HostPid())
		}
		fmt.Printf("holding %s; host pids: %s\n", hold, strings.Join(pids, " "))
		time.Sleep(hold)
	}
	stopBegin := time.Now()
	for i, rt := range rts {
		if _, err := rt.Stop(ctx); err != nil {
			return fmt.Errorf("stop %d: %w", i, err)
		}
	}
	fmt.Printf("stopped all in %s\n", time.Since(stopBegin).Round(time.Millisecond))
	if entries, _ := os.ReadDir(state); len(entries) > 0 {
		return fmt.Errorf("%d runtime homes left behind", len(entries))
	}
	return nil
}

func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.WriteHeapProfile(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func rssKiB(pid string) int { return statusField(pid, "VmRSS:") }

func statusField(pid, key string) int {
	f, err := os.Open("/proc/" + pid + "/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), key) {
			v, _ := strconv.Atoi(strings.Fields(sc.Text())[1])
			return v
		}
	}
	return 0
}

func pssKiB(pid string) int {
	data, err := os.ReadFile("/proc/" + pid + "/smaps_rollup")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "Pss:") {
			v, _ := strconv.Atoi(strings.Fields(line)[1])
			return v
		}
	}
	return 0
}

// metaSys is the Go runtime's own memory: span and cache structures, the
// profiling bucket table, GC metadata and the rest.
func metaSys(ms *runtime.MemStats) uint64 {
	return ms.MSpanInuse + ms.MCacheInuse + ms.BuckHashSys + ms.GCSys + ms.OtherSys
}

func mib(kib int) float64 { return float64(kib) / 1024 }

func mibB(b uint64) float64 { return float64(b) / (1 << 20) }

func median(v []int) int {
	s := append([]int(nil), v...)
	sort.Ints(s)
	return s[len(s)/2]
}

func maxOf(v []int) int {
	m := 0
	for _, x := range v {
		m = max(m, x)
	}
	return m
}
