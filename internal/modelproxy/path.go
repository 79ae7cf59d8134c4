package modelproxy

import (
	"net/url"
	"strings"
)

// maxRouteName bounds a route's name.
const maxRouteName = 64

// validRouteName reports whether name can be a route's name: 1 to 64
// letters, digits, '.', '_' or '-', and not a dot segment.
func validRouteName(name string) bool {
	if name == "" || len(name) > maxRouteName || name == "." || name == ".." {
		return false
	}
	for _, c := range []byte(name) {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '.', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}

// splitRoutePath splits an escaped request path /r/<route><rest> into the
// route's name and the rest (escaped, "" or starting with '/'). ok is false
// for any other path, for a name that is not a route name, and for a rest
// that holds a dot segment, an escaped slash or backslash, or a malformed
// escape: what reaches the upstream stays below its base URL.
func splitRoutePath(escaped string) (route, rest string, ok bool) {
	tail, found := strings.CutPrefix(escaped, "/r/")
	if !found {
		return "", "", false
	}
	route, rest = tail, ""
	if i := strings.IndexByte(tail, '/'); i >= 0 {
		route, rest = tail[:i], tail[i:]
	}
	if !validRouteName(route) {
		return "", "", false
	}
	decoded, err := url.PathUnescape(rest)
	if err != nil || strings.ContainsAny(decoded, "\\\x00") || strings.Count(decoded, "/") != strings.Count(rest, "/") {
		return "", "", false
	}
	for seg := range strings.SplitSeq(decoded, "/") {
		if seg == "." || seg == ".." {
			return "", "", false
		}
	}
	return route, rest, true
}

// upstreamPath is the part of rest that is appended to the route's base
// URL: OpenAI clients are given …/r/<route>/v1 and append /responses or
// /chat/completions, so /v1 is dropped (the upstream base URL holds its
// own); Anthropic clients are given …/r/<route> and append /v1/messages,
// all of which is kept. ok is false when an OpenAI path lacks the /v1.
func upstreamPath(api, rest string) (string, bool) {
	if api == APIAnthropicMessages {
		return rest, true
	}
	if rest == "/v1" {
		return "", true
	}
	p, found := strings.CutPrefix(rest, "/v1/")
	if !found {
		return "", false
	}
	return "/" + p, true
}
