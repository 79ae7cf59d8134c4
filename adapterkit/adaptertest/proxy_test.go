package adaptertest

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// The sentinel proxy counts a client that honours its proxy variables and
// records which host it asked for.
func TestProxy(t *testing.T) {
	p := NewProxy(t)
	var proxy string
	for _, kv := range p.Env() {
		if v, ok := strings.CutPrefix(kv, "HTTPS_PROXY="); ok {
			proxy = v
		}
	}
	if proxy != p.URL {
		t.Fatalf("HTTPS_PROXY = %q, want %q", proxy, p.URL)
	}
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		Proxy: func(*http.Request) (*url.URL, error) { return url.Parse(proxy) },
	}}
	if resp, err := client.Get("https://example.invalid/"); err == nil {
		resp.Body.Close()
		t.Fatal("the sentinel proxy answered")
	}
	if p.Hits() != 1 || len(p.Requests()) != 1 || !strings.Contains(p.Requests()[0], "example.invalid:443") {
		t.Fatalf("hits %d, requests %q", p.Hits(), p.Requests())
	}
}
