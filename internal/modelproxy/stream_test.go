package modelproxy

import (
	"bytes"
	"io"
	"net/url"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/fabric-runtime/fabric/modelstub"
)

// chunkReader returns its data in pieces of the given sizes (cycled).
type chunkReader struct {
	data  []byte
	sizes []int
	i     int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := 1
	if len(c.sizes) > 0 {
		n = max(1, c.sizes[c.i%len(c.sizes)])
		c.i++
	}
	n = min(n, len(p), len(c.data))
	copy(p, c.data[:n])
	c.data = c.data[n:]
	return n, nil
}

// pass runs data through a responseBody fed in chunks and returns what the
// client reads and the usage found.
func pass(t testing.TB, api modelstub.API, sse bool, data []byte, sizes []int, secrets ...string) ([]byte, modelstub.Usage, bool) {
	return passLimited(t, &meter{api: api, sse: sse}, data, sizes, secrets...)
}

func passLimited(t testing.TB, m *meter, data []byte, sizes []int, secrets ...string) ([]byte, modelstub.Usage, bool) {
	ended := false
	b := &responseBody{src: io.NopCloser(&chunkReader{data: data, sizes: sizes}), mask: newMasker(secrets...), meter: m, ended: func() { ended = true }}
	out, err := io.ReadAll(iotest.OneByteReader(b)) // the client reads byte by byte, too
	if err != nil {
		t.Fatal(err)
	}
	if !ended || !b.eof {
		t.Fatal("the end of the body was not seen")
	}
	return out, m.usage, m.found
}

// maskAll is what masking must give: every secret replaced by as many '*'.
func maskAll(data []byte, secrets ...string) []byte {
	out := append([]byte(nil), data...)
	for _, s := range secrets {
		if len(s) >= minSecretLen {
			out = bytes.ReplaceAll(out, []byte(s), bytes.Repeat([]byte("*"), len(s)))
		}
	}
	return out
}

func TestMaskAcrossReads(t *testing.T) {
	const key = "sk-secret-0123456789"
	data := []byte("a sk-secret-0123 then " + key + " and sk-" + key + key + " and short sk-s")
	for _, sizes := range [][]int{{1}, {3, 7}, {5}, {1 << 20}} {
		out, _, _ := pass(t, modelstub.APIChat, false, data, sizes, key, "sk-secret-0123")
		if want := maskAll(data, key, "sk-secret-0123"); !bytes.Equal(out, want) {
			t.Fatalf("sizes %v: %q, want %q", sizes, out, want)
		}
	}
	if out, _, _ := pass(t, modelstub.APIChat, false, []byte("abcdefg"), nil, "abc"); string(out) != "abcdefg" {
		t.Fatalf("a secret shorter than %d bytes was masked: %q", minSecretLen, out)
	}
}

func TestMeterSSE(t *testing.T) {
	stream := "event: message_start\r\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":5,\"output_tokens\":1}}}\r\n\r\n" +
		": comment\n\n" +
		"event: message_delta\ndata: {\"type\":\"message_delta\",\n" +
		"data: \"usage\":{\"output_tokens\":9}}\n\n" +
		"data: {\"type\":\"message_stop\"}"
	for _, sizes := range [][]int{{1}, {2, 5}, {1 << 20}} {
		out, u, found := pass(t, modelstub.APIMessages, true, []byte(stream), sizes)
		if string(out) != stream || !found || u != (modelstub.Usage{InputTokens: 5, OutputTokens: 9}) {
			t.Fatalf("sizes %v: usage %+v found %v", sizes, u, found)
		}
	}
	// An event over the bound is passed through, uncounted; the next one
	// is read again.
	usage := "data: {\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":1}}\n\n"
	big := "data: {\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":5},\"x\":\"" + strings.Repeat("x", 200) + "\"}\n\n"
	for _, data := range []string{big, big + usage} {
		out, u, _ := passLimited(t, &meter{api: modelstub.APIChat, sse: true, limit: 100}, []byte(data), []int{7})
		if string(out) != data || u.InputTokens == 5 || (data != big && u.InputTokens != 1) {
			t.Fatalf("oversized event: %d bytes, usage %+v", len(out), u)
		}
	}
}

func TestMeterBody(t *testing.T) {
	body := `{"usage":{"prompt_tokens":3,"completion_tokens":4}}`
	_, u, found := pass(t, modelstub.APIChat, false, []byte(body), []int{2})
	if !found || u != (modelstub.Usage{InputTokens: 3, OutputTokens: 4}) {
		t.Fatalf("%+v %v", u, found)
	}
}

func TestSplitRoutePath(t *testing.T) {
	cases := map[string]struct {
		route, rest string
		ok          bool
	}{
		"/r/resp/v1/responses":          {"resp", "/v1/responses", true},
		"/r/a.b_c-1":                    {"a.b_c-1", "", true},
		"/r/x/v1/models/gpt%20x":        {"x", "/v1/models/gpt%20x", true},
		"/r/x/v1/../admin":              {ok: false},
		"/r/x/v1/%2e%2e/admin":          {ok: false},
		"/r/x/v1%2fadmin":               {ok: false},
		"/r/x/v1/%5c":                   {ok: false},
		"/r/x/v1/%zz":                   {ok: false},
		"/r/../v1":                      {ok: false},
		"/r//v1":                        {ok: false},
		"/r/" + strings.Repeat("a", 65): {ok: false},
		"/x/resp/v1":                    {ok: false},
		"/r/a b/v1":                     {ok: false},
	}
	for in, want := range cases {
		route, rest, ok := splitRoutePath(in)
		if ok != want.ok || route != want.route || rest != want.rest {
			t.Errorf("%q: %q %q %v", in, route, rest, ok)
		}
	}
}

func FuzzSplitRoutePath(f *testing.F) {
	for _, s := range []string{"/r/resp/v1/responses", "/r/x/v1/%2e%2e/a", "/r/a/./b", "/r/x%2fy", "/r/claude/v1/messages?beta=true"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		route, rest, ok := splitRoutePath(in)
		if !ok {
			return
		}
		if !validRouteName(route) || "/r/"+route+rest != in {
			t.Fatalf("%q: route %q rest %q", in, route, rest)
		}
		for _, api := range []string{APIOpenAIResponses, APIAnthropicMessages} {
			p, ok := upstreamPath(api, rest)
			if !ok {
				continue
			}
			d, err := url.PathUnescape(p)
			if err != nil || strings.Contains("/"+d+"/", "/../") || strings.Contains("/"+d+"/", "/./") {
				t.Fatalf("%q: upstream path %q", in, p)
			}
		}
	})
}

// FuzzResponseBody: however the upstream's bytes are cut, the client gets
// them all with every secret masked, and the usage read from a stream is
// the one read from the same events at once.
func FuzzResponseBody(f *testing.F) {
	f.Add([]byte("data: {\"usage\":{\"prompt_tokens\":2,\"completion_tokens\":3}}\n\ndata: sk-key-12345678\n\n"), uint8(3), true)
	f.Add([]byte(`{"type":"message","usage":{"input_tokens":1}} sk-key-1234567`), uint8(1), false)
	f.Fuzz(func(t *testing.T, data []byte, size uint8, sse bool) {
		secrets := []string{"sk-key-12345678", "fabp_placeholder"}
		out, u, found := pass(t, modelstub.APIChat, sse, data, []int{int(size), int(size) * 7}, secrets...)
		if want := maskAll(data, secrets...); !bytes.Equal(out, want) {
			t.Fatalf("masked %q, want %q", out, want)
		}
		_, u1, found1 := pass(t, modelstub.APIChat, sse, data, []int{1 << 20})
		if u != u1 || found != found1 {
			t.Fatalf("usage depends on how the stream is cut: %+v %v vs %+v %v", u, found, u1, found1)
		}
	})
}
