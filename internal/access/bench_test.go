package access

import (
	"bufio"
	"cmp"
	"context"
	"fmt"
	"github.com/fabric-runtime/fabric/internal/testsupport/testproc"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/time/rate"

	fabric "github.com/fabric-runtime/fabric"
	"github.com/fabric-runtime/fabric/adapters/bundled"
	"github.com/fabric-runtime/fabric/contract"
)

// Benchmarks of issue 12 acceptance 6 (bench/access/run.sh prints their
// medians): added time to the first text event of a turn through the
// gateway, RSS of 200 idle streams, and GET /v1/fabric/access throughput.
// newDispatcher and newEnv take a *testing.T; these take a testing.TB and
// serve the gateway without the test log.

// idleAgent streams its text, then holds the turn for an hour.
const idleAgent = `{response: "turn {turn}: {input}", events: 3, delay_ms: 3600000}`

// startRuntimes is newDispatcher for a benchmark: one real scripted
// runtime per agent.
func startRuntimes(tb testing.TB, agents map[string]string) *runtimeDispatcher {
	tb.Helper()
	d := &runtimeDispatcher{rts: map[string]*fabric.Runtime{}, gens: map[string]string{}, results: map[string]*contract.RunResult{},
		running: map[string]bool{}, invokes: map[string]int{}}
	client := fabric.New(fabric.WithBundledAdapters(bundled.Adapters()), fabric.WithStateDir(tb.TempDir()))
	for name, settings := range agents {
		cfg, err := client.ParseConfig([]byte(agentConfig(name, settings)), name+".yaml", fabric.LoadOptions{})
		if err == nil {
			d.rts[name], err = client.StartRuntime(context.Background(), cfg)
		}
		if err != nil {
			tb.Fatal(err)
		}
		rt := d.rts[name]
		tb.Cleanup(func() { rt.Stop(context.Background()) })
		d.gens[name] = "g1"
	}
	return d
}

// benchGateway serves a gateway on a real socket until the benchmark ends.
func benchGateway(tb testing.TB, d Dispatcher, bs []Binding, tune func(*Options)) *Gateway {
	tb.Helper()
	opts := Options{StoreDir: tb.TempDir(), Clients: []string{"voice"}, Bindings: bs, Dispatcher: d}
	if tune != nil {
		tune(&opts)
	}
	g, err := New(context.Background(), opts)
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- g.Serve(ctx) }()
	tb.Cleanup(func() {
		cancel()
		<-done
		cctx, ccancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer ccancel()
		if err := g.Close(cctx); err != nil {
			tb.Errorf("close: %v", err)
		}
	})
	return g
}

// unlimited lifts the per-key and per-address rate limits: every request
// of a benchmark comes from 127.0.0.1.
func unlimited(o *Options) {
	o.KeyRate, o.KeyBurst, o.AddrRate, o.AddrBurst = rate.Inf, 1, rate.Inf, 1
}

func benchKey(tb testing.TB, g *Gateway, agent string) string {
	tb.Helper()
	k, err := g.Grant("voice", agent, time.Hour)
	if err != nil {
		tb.Fatal(err)
	}
	return k.Token
}

func benchClient(tb testing.TB, conns int) *http.Client {
	tr := &http.Transport{MaxIdleConns: conns, MaxIdleConnsPerHost: conns, MaxConnsPerHost: conns, IdleConnTimeout: time.Minute}
	tb.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

const textDelta = "event: response.output_text.delta"

func turnBody(agent string, stream bool) string {
	return `{"model":"` + agent + `","input":"hello","stream":` + strconv.FormatBool(stream) + `}`
}

// gatewayTurn posts a streamed turn and returns the time to the response
// headers, to the first text event and to the end of the stream.
func gatewayTurn(tb testing.TB, c *http.Client, g *Gateway, token, agent string) (headers, first, end time.Duration) {
	req, _ := http.NewRequest("POST", g.URL()+"/v1/responses", strings.NewReader(turnBody(agent, true)))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	t0 := time.Now()
	resp, err := c.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	headers = time.Since(t0)
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		tb.Fatalf("POST /v1/responses: %d %s", resp.StatusCode, b)
	}
	rd := bufio.NewReader(resp.Body)
	for {
		line, err := rd.ReadString('\n')
		if err == io.EOF {
			break
		}
		if err != nil {
			tb.Fatal(err)
		}
		if first == 0 && strings.HasPrefix(line, textDelta) {
			first = time.Since(t0)
		}
	}
	if first == 0 {
		tb.Fatal("the stream had no text event")
	}
	return headers, first, time.Since(t0)
}

// directTurn invokes the same runtime through the Dispatcher and returns
// the time to its first output_delta event.
func directTurn(tb testing.TB, d *runtimeDispatcher, agent string) (first time.Duration) {
	var once sync.Once
	t0 := time.Now()
	res, err := d.Invoke(context.Background(), agent, contract.RunRequest{RequestID: newID("direct_"), Input: "hello"}, func(ev contract.FabricEvent) {
		if ev.Kind == "output_delta" {
			once.Do(func() { first = time.Since(t0) })
		}
	})
	if err != nil || res.Status != contract.StatusSucceeded || first == 0 {
		tb.Fatalf("direct invoke: %v %+v (first event after %v)", err, res, first)
	}
	return first
}

func median[T cmp.Ordered](v []T) T {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// BenchmarkTurnFirstByte pairs, on one scripted runtime, a turn invoked
// directly (the Dispatcher's Invoke, what the supervisor runs for the
// gateway) with one through POST /v1/responses stream:true, alternating
// which goes first. Metrics: medians of the time to the first text event
// of each path and of the paired difference (budget: added <= 2 ms).
// The per-key rate limit is lifted (a turn takes about a millisecond).
func BenchmarkTurnFirstByte(b *testing.B) {
	d := startRuntimes(b, map[string]string{"alpha": textAgent})
	g := benchGateway(b, d, bindings("alpha"), unlimited)
	token, c := benchKey(b, g, "alpha"), benchClient(b, 1)
	directTurn(b, d, "alpha") // warm both paths
	gatewayTurn(b, c, g, token, "alpha")
	var direct, gw, added, headers []time.Duration
	i := 0
	for b.Loop() {
		var dt, ht, gt time.Duration
		if i%2 == 0 {
			dt = directTurn(b, d, "alpha")
			ht, gt, _ = gatewayTurn(b, c, g, token, "alpha")
		} else {
			ht, gt, _ = gatewayTurn(b, c, g, token, "alpha")
			dt = directTurn(b, d, "alpha")
		}
		i++
		direct, gw, headers, added = append(direct, dt), append(gw, gt), append(headers, ht), append(added, gt-dt)
	}
	b.ReportMetric(ms(median(direct)), "direct-ms")
	b.ReportMetric(ms(median(gw)), "gateway-ms")
	b.ReportMetric(ms(median(headers)), "gateway-headers-ms")
	b.ReportMetric(ms(median(added)), "added-ms")
}

// idleDispatcher runs turns without a runtime: each streams the scripted
// adapter's three text events, then idles until cancelled. It lets one
// gateway hold 200 turns at once on 200 agents without 200 processes.
type idleDispatcher struct{}

func (idleDispatcher) Invoke(ctx context.Context, agent string, req contract.RunRequest, events func(contract.FabricEvent)) (*contract.RunResult, error) {
	events(contract.FabricEvent{EventID: req.RequestID + "-0", Kind: "invocation_start"})
	for i, chunk := range []string{"turn 1: ", "hel", "lo"} {
		events(contract.FabricEvent{EventID: req.RequestID + "-" + strconv.Itoa(i+1), Kind: "output_delta", Message: chunk})
	}
	<-ctx.Done()
	return &contract.RunResult{AgentName: agent, RequestID: req.RequestID, Status: contract.StatusCancelled, Output: "turn 1: hello"}, nil
}

func (idleDispatcher) Agent(ctx context.Context, agent string) (AgentInfo, error) {
	return AgentInfo{Generation: "g1", RuntimeID: "rt-" + agent, Health: "passed"}, nil
}

func (idleDispatcher) Lookup(ctx context.Context, agent, id string) (*contract.RunResult, bool, bool, error) {
	return nil, false, false, nil
}

// openStream sends one request on a raw connection and reads up to the
// first text event; the connection stays open, nothing reads it after.
func openStream(tb testing.TB, g *Gateway, method, path, token, body string) net.Conn {
	tb.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(g.URL(), "http://"))
	if err != nil {
		tb.Fatal(err)
	}
	fmt.Fprintf(conn, "%s %s HTTP/1.1\r\nHost: gateway\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
		method, path, token, len(body), body)
	rd := bufio.NewReaderSize(conn, 512)
	resp, err := http.ReadResponse(rd, nil)
	if err != nil || resp.StatusCode != 200 {
		tb.Fatalf("%s %s: %v %v", method, path, err, resp)
	}
	lines := bufio.NewReaderSize(resp.Body, 512)
	for {
		line, err := lines.ReadString('\n')
		if err != nil {
			tb.Fatalf("%s %s: stream ended before its text: %v", method, path, err)
		}
		if strings.HasPrefix(line, textDelta) {
			return conn
		}
	}
}

// rssBytes is the process's resident set (VmRSS), through testproc; it
// fails the benchmark where procfs cannot tell.
func rssBytes(tb testing.TB) int64 {
	kib := testproc.RSSKiB(os.Getpid())
	if kib == 0 {
		tb.Fatal("cannot read VmRSS from /proc/self/status (procfs is needed for this benchmark)")
	}
	return kib << 10
}

// settledRSS is the resident set once garbage is collected and returned.
func settledRSS(tb testing.TB) int64 {
	runtime.GC()
	debug.FreeOSMemory()
	return rssBytes(tb)
}

const mib = 1 << 20

// idleStreams opens n streams with open(i) each iteration and reports the
// RSS they add: "MiB" once garbage is collected and returned to the OS,
// "MiB-raw" as the process shows it right away (the garbage of the
// requests included). The clients' raw sockets are in the same process
// (a few hundred bytes each). drained waits for the gateway to forget them.
func idleStreams(b *testing.B, n int, open func(i int) net.Conn, drained func() bool) {
	var settled, raw []int64
	for b.Loop() {
		b.StopTimer()
		before := settledRSS(b)
		b.StartTimer()
		conns := make([]net.Conn, n)
		for i := range conns {
			conns[i] = open(i)
		}
		b.StopTimer()
		raw = append(raw, rssBytes(b)-before)
		settled = append(settled, settledRSS(b)-before)
		for _, c := range conns {
			c.Close()
		}
		for deadline := time.Now().Add(10 * time.Second); !drained(); time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				b.Fatal("the gateway did not end the closed streams")
			}
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(median(settled))/mib, "MiB")
	b.ReportMetric(float64(median(raw))/mib, "MiB-raw")
}

// BenchmarkIdleStreams200 measures the RSS added to the gateway's process
// by 200 open streams whose turns are idle (budget <= 50 MiB):
//   - resume: 200 GET /v1/responses/{id}?stream=true (one key each) on the
//     running turns of 4 real scripted runtimes (delay_ms: one hour), each
//     replayed from 0 and then following the live turn;
//   - turns: 200 POST /v1/responses stream:true, one turn (and write-ahead
//     record) each on 200 agents of idleDispatcher; closing the
//     connections cancels them (on_disconnect: cancel).
//
// The address rate limit is lifted (all 200 come from 127.0.0.1).
func BenchmarkIdleStreams200(b *testing.B) {
	const n = 200
	b.Run("resume", func(b *testing.B) {
		agents := map[string]string{}
		var names []string
		for i := range 4 {
			names = append(names, "idle"+strconv.Itoa(i))
			agents[names[i]] = idleAgent
		}
		d := startRuntimes(b, agents)
		g := benchGateway(b, d, bindings(names...), func(o *Options) { o.AddrRate, o.AddrBurst = rate.Inf, 1 })
		var tokens []string
		for i := range n {
			tokens = append(tokens, benchKey(b, g, names[i%len(names)]))
		}
		for i, name := range names {
			openStream(b, g, "POST", "/v1/responses", tokens[i], turnBody(name, true)).Close() // the turn goes on (on_disconnect: continue)
		}
		byAgent := map[string]string{}
		for _, ti := range g.Status().Turns {
			byAgent[ti.Agent] = ti.ResponseID
		}
		b.Cleanup(func() { // before the gateway's Close, which waits for its turns
			g.mu.Lock()
			for _, t := range g.live {
				t.cancel()
			}
			g.mu.Unlock()
		})
		idleStreams(b, n, func(i int) net.Conn {
			return openStream(b, g, "GET", "/v1/responses/"+byAgent[names[i%len(names)]]+"?stream=true", tokens[i], "")
		}, func() bool { g.mu.Lock(); defer g.mu.Unlock(); return len(g.watchers) == 0 })
	})
	b.Run("turns", func(b *testing.B) {
		var bs []Binding
		for i := range n {
			bs = append(bs, Binding{Agent: "a" + strconv.Itoa(i), Generation: "g1", Idempotency: IdempotencyOptional, OnDisconnect: OnDisconnectCancel})
		}
		g := benchGateway(b, idleDispatcher{}, bs, func(o *Options) { o.AddrRate, o.AddrBurst = rate.Inf, 1 })
		var tokens []string
		for _, bd := range bs {
			tokens = append(tokens, benchKey(b, g, bd.Agent))
		}
		idleStreams(b, n, func(i int) net.Conn {
			return openStream(b, g, "POST", "/v1/responses", tokens[i], turnBody(bs[i].Agent, true))
		}, func() bool { g.mu.Lock(); defer g.mu.Unlock(); return len(g.live) == 0 && len(g.watchers) == 0 })
	})
}

// BenchmarkAccessStatus is authenticated GET /v1/fabric/access from
// keep-alive clients in the same process (run with -cpu 2: clients and
// gateway share the 2 cores). Metric: 200s per second (budget >= 1,000).
//   - lifted: one key, rate limits lifted, 8 x GOMAXPROCS clients;
//   - default-limits: one key at the defaults (50/s with a burst of 100 per
//     key; 200/s, burst 400, per address), so ok/s is bounded by them;
//   - default-limits-24keys-8addrs: the defaults with 24 clients, one key
//     each, dialing from 127.0.0.1-8 (3 keys per address).
//
// With the defaults, each key's burst is spent (untimed) first, so ok/s is
// the sustained rate the limits allow.
func BenchmarkAccessStatus(b *testing.B) {
	d := startRuntimes(b, map[string]string{"alpha": textAgent})
	for _, bc := range []struct {
		name        string
		tune        func(*Options)
		keys, addrs int
	}{{"lifted", unlimited, 1, 1}, {"default-limits", nil, 1, 1}, {"default-limits-24keys-8addrs", nil, 24, 8}} {
		b.Run(bc.name, func(b *testing.B) {
			g := benchGateway(b, d, bindings("alpha"), bc.tune)
			var tokens []string
			for range bc.keys {
				tokens = append(tokens, benchKey(b, g, "alpha"))
			}
			if bc.tune == nil {
				for i, token := range tokens {
					spendBurst(b, g, token, net.IPv4(127, 0, 1, byte(1+i)))
				}
			}
			conns := 8 * runtime.GOMAXPROCS(0)
			if bc.keys > 1 {
				b.SetParallelism((bc.keys + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
				conns = 1
			} else {
				b.SetParallelism(8)
			}
			var mu sync.Mutex
			statuses, next := map[int]int{}, 0
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				mu.Lock()
				me := next
				next++
				mu.Unlock()
				token := tokens[me%len(tokens)]
				c := benchClient(b, conns)
				if bc.keys > 1 {
					fromAddr(c, net.IPv4(127, 0, 0, byte(1+me%bc.addrs)))
				}
				local := map[int]int{}
				for pb.Next() {
					status, err := getAccess(c, g, token)
					if err != nil {
						b.Error(err)
						return
					}
					local[status]++
				}
				mu.Lock()
				for k, v := range local {
					statuses[k] += v
				}
				mu.Unlock()
			})
			if other := b.N - statuses[200] - statuses[429]; other != 0 || (bc.tune != nil && statuses[429] > 0) {
				b.Fatalf("statuses %v", statuses)
			}
			b.ReportMetric(float64(statuses[200])/b.Elapsed().Seconds(), "ok/s")
		})
	}
}

// getAccess is one authenticated GET /v1/fabric/access; its status.
func getAccess(c *http.Client, g *Gateway, token string) (int, error) {
	req, _ := http.NewRequest("GET", g.URL()+"/v1/fabric/access", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, nil
}

// fromAddr makes c dial from the local address ip.
func fromAddr(c *http.Client, ip net.IP) {
	c.Transport.(*http.Transport).DialContext = (&net.Dialer{LocalAddr: &net.TCPAddr{IP: ip}}).DialContext
}

// spendBurst spends a key's burst from a fresh address (whose own bucket
// outlasts the key's): requests until the first 429.
func spendBurst(tb testing.TB, g *Gateway, token string, ip net.IP) {
	c := benchClient(tb, 1)
	fromAddr(c, ip)
	for range 1000 {
		status, err := getAccess(c, g, token)
		if err != nil {
			tb.Fatal(err)
		}
		if status == 429 {
			return
		}
	}
	tb.Fatal("no 429 after 1000 requests at the default limits")
}
