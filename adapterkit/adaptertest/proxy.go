package adaptertest

import (
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Proxy is a sentinel HTTP(S) proxy on loopback. A Rig points the
// hosts' proxy variables at it (Env): a harness honours them for every
// host but loopback, so any connection here is an attempt to reach a host
// other than the scripted model endpoint. It counts connections, records
// each request line (which names the host) and closes them unanswered.
type Proxy struct {
	// URL is http://127.0.0.1:<port>.
	URL  string
	hits atomic.Int64
	mu   sync.Mutex
	reqs []string
}

// NewProxy starts a sentinel proxy that lives until t ends.
func NewProxy(t testing.TB) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{URL: "http://" + ln.Addr().String()}
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.hits.Add(1)
			_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
			buf := make([]byte, 512)
			n, _ := c.Read(buf)
			line, _, _ := strings.Cut(string(buf[:n]), "\r\n")
			p.mu.Lock()
			p.reqs = append(p.reqs, line)
			p.mu.Unlock()
			c.Close()
		}
	})
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	return p
}

// Hits is the number of connections the proxy received.
func (p *Proxy) Hits() int64 { return p.hits.Load() }

// Requests are the request lines received (CONNECT host:port HTTP/1.1, ...).
func (p *Proxy) Requests() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.reqs...)
}

// Env is the proxy environment that sends every HTTP(S) client to p,
// loopback excepted.
func (p *Proxy) Env() []string {
	var env []string
	for _, k := range []string{"HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY", "https_proxy", "http_proxy", "all_proxy"} {
		env = append(env, k+"="+p.URL)
	}
	return append(env, "NO_PROXY=127.0.0.1,localhost,::1", "no_proxy=127.0.0.1,localhost,::1")
}
