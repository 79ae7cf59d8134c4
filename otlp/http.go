package otlp

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"golang.org/x/net/http/httpproxy"

	"github.com/fabric-runtime/fabric/internal/telemetry"
)

// OTLP/HTTP content types.
const (
	contentTypeProto = "application/x-protobuf"
	contentTypeJSON  = "application/json"
)

// poster sends OTLP export requests to one endpoint: gzip and headers as
// configured, one timeout for the request and its retries, and retries of
// the answers OTLP/HTTP calls retryable (429, 502, 503, 504), after
// Retry-After when the collector sends one.
type poster struct {
	client   *http.Client
	endpoint string
	headers  map[string]string
	timeout  time.Duration
	gzip     bool
}

func newPoster(es telemetry.Export) (*poster, error) {
	u, err := url.Parse(es.Endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("telemetry: the OTLP endpoint %q is not an http(s) URL", es.Endpoint)
	}
	tcfg, err := es.TLSConfig()
	if err != nil {
		return nil, err
	}
	tr := &http.Transport{
		Proxy:                 proxyFunc(es.LookupEnv),
		DialContext:           (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		ForceAttemptHTTP2:     true,
		TLSClientConfig:       tcfg,
		MaxIdleConns:          4,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
	timeout := es.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	return &poster{client: &http.Client{Transport: tr}, endpoint: es.Endpoint, headers: es.Headers, timeout: timeout, gzip: es.Gzip}, nil
}

// firstRetry is the wait before the first retry; each next one doubles.
const firstRetry = time.Second

func (p *poster) post(ctx context.Context, body []byte, contentType string) error {
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	encoding := ""
	if p.gzip {
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		_, _ = zw.Write(body) // a bytes.Buffer does not fail
		_ = zw.Close()
		body, encoding = b.Bytes(), "gzip"
	}
	wait := firstRetry
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.endpoint, bytes.NewReader(body))
		if err != nil {
			return fmt.Errorf("telemetry: OTLP export: %w", err)
		}
		for k, v := range p.headers {
			req.Header.Set(k, v)
		}
		req.Header.Set("Content-Type", contentType)
		req.Header.Set("User-Agent", "Fabric OTLP exporter")
		if encoding != "" {
			req.Header.Set("Content-Encoding", encoding)
		}
		resp, err := p.client.Do(req)
		if err != nil {
			return fmt.Errorf("telemetry: OTLP export: %w", err)
		}
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		_ = resp.Body.Close()
		if resp.StatusCode >= 200 && resp.StatusCode <= 299 {
			return nil
		}
		failed := fmt.Errorf("telemetry: OTLP export to %s: %s: %s", p.endpoint, resp.Status, orEmpty(strings.TrimSpace(string(msg))))
		switch resp.StatusCode {
		case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		default:
			return failed
		}
		delay := wait
		if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s >= 0 {
			delay = time.Duration(s) * time.Second
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < delay {
			return failed
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return errors.Join(failed, ctx.Err())
		case <-t.C:
		}
		wait *= 2
	}
}

func (p *poster) close() { p.client.CloseIdleConnections() }

func orEmpty(s string) string {
	if s == "" {
		return "(empty body)"
	}
	return s
}

// proxyFunc resolves HTTP(S)_PROXY and NO_PROXY through the caller's
// lookup (upper case first, as net/http does).
func proxyFunc(lookup func(string) (string, bool)) func(*http.Request) (*url.URL, error) {
	get := func(names ...string) string {
		for _, n := range names {
			if lookup == nil {
				return ""
			}
			if v, ok := lookup(n); ok && v != "" {
				return v
			}
		}
		return ""
	}
	cfg := httpproxy.Config{
		HTTPProxy:  get("HTTP_PROXY", "http_proxy"),
		HTTPSProxy: get("HTTPS_PROXY", "https_proxy"),
		NoProxy:    get("NO_PROXY", "no_proxy"),
	}
	pf := cfg.ProxyFunc()
	return func(r *http.Request) (*url.URL, error) { return pf(r.URL) }
}
