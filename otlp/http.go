package otlp

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"golang.org/x/net/http/httpproxy"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

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

// exportRequest is an ExportTraceServiceRequest or
// ExportMetricsServiceRequest in protobuf: both are field 1 repeated, so
// the collector packages (which link gRPC) are not needed to write them.
func exportRequest[M proto.Message](items []M) ([]byte, error) {
	var b []byte
	for _, m := range items {
		raw, err := proto.Marshal(m)
		if err != nil {
			return nil, fmt.Errorf("telemetry: OTLP export: %w", err)
		}
		b = protowire.AppendTag(b, 1, protowire.BytesType)
		b = protowire.AppendBytes(b, raw)
	}
	return b, nil
}

// exportRequestJSON is the same request in OTLP/JSON as the upstream
// exporter writes it: field names in lowerCamelCase, 64-bit integers as
// strings, enums as numbers, and trace and span ids in (upper-case) hex
// where other bytes are base64. It is written from the messages'
// reflection, not with protojson, whose package initialization every
// process would pay for.
func exportRequestJSON[M proto.Message](field string, items []M) ([]byte, error) {
	b := append(appendJSONString([]byte("{"), field), ":["...)
	for i, m := range items {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONMessage(b, m.ProtoReflect())
	}
	return append(b, "]}"...), nil
}

// isID says whether an OTLP/JSON field holds a trace or span id.
func isID(jsonName string) bool {
	switch jsonName {
	case "traceId", "spanId", "parentSpanId":
		return true
	}
	return false
}

func appendJSONMessage(b []byte, m protoreflect.Message) []byte {
	b = append(b, '{')
	first := true
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if !first {
			b = append(b, ',')
		}
		first = false
		b = appendJSONString(b, fd.JSONName())
		b = append(b, ':')
		switch {
		case fd.IsList():
			l := v.List()
			b = append(b, '[')
			for i := range l.Len() {
				if i > 0 {
					b = append(b, ',')
				}
				b = appendJSONValue(b, fd, l.Get(i))
			}
			b = append(b, ']')
		case fd.IsMap():
			b = append(b, '{')
			n := 0
			v.Map().Range(func(k protoreflect.MapKey, mv protoreflect.Value) bool {
				if n > 0 {
					b = append(b, ',')
				}
				n++
				b = appendJSONString(b, k.String())
				b = append(b, ':')
				b = appendJSONValue(b, fd.MapValue(), mv)
				return true
			})
			b = append(b, '}')
		default:
			b = appendJSONValue(b, fd, v)
		}
		return true
	})
	return append(b, '}')
}

func appendJSONValue(b []byte, fd protoreflect.FieldDescriptor, v protoreflect.Value) []byte {
	switch fd.Kind() {
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return appendJSONMessage(b, v.Message())
	case protoreflect.BoolKind:
		return strconv.AppendBool(b, v.Bool())
	case protoreflect.EnumKind:
		return strconv.AppendInt(b, int64(v.Enum()), 10)
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return strconv.AppendInt(b, v.Int(), 10)
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return strconv.AppendUint(b, v.Uint(), 10)
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return append(strconv.AppendInt(append(b, '"'), v.Int(), 10), '"')
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return append(strconv.AppendUint(append(b, '"'), v.Uint(), 10), '"')
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		f := v.Float()
		switch {
		case math.IsNaN(f):
			return append(b, `"NaN"`...)
		case math.IsInf(f, 1):
			return append(b, `"Infinity"`...)
		case math.IsInf(f, -1):
			return append(b, `"-Infinity"`...)
		}
		return strconv.AppendFloat(b, f, 'g', -1, 64)
	case protoreflect.StringKind:
		return appendJSONString(b, v.String())
	case protoreflect.BytesKind:
		if isID(fd.JSONName()) {
			return appendJSONString(b, strings.ToUpper(hex.EncodeToString(v.Bytes())))
		}
		return appendJSONString(b, base64.StdEncoding.EncodeToString(v.Bytes()))
	}
	return append(b, "null"...)
}

func appendJSONString(b []byte, s string) []byte {
	q, _ := json.Marshal(s) // a string always marshals
	return append(b, q...)
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
