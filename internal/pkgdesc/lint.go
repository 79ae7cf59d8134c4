package pkgdesc

import (
	"math"
	"regexp"
	"strings"
	"sync"

	"go.yaml.in/yaml/v4"

	"github.com/fabric-runtime/fabric/internal/strictdoc"
)

// A descriptor is credential-free: it names environment variables, never
// their values. The lint rejects what looks like a secret anywhere in it,
// at its JSON path, never quoting the value.
var (
	apiKeyLike = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(^|[^A-Za-z0-9])(sk|pk|rk)-[A-Za-z0-9_-]{16,}`) })
	pemBlock   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`-----BEGIN [A-Z0-9 ]+-----`) })
	jwtLike    = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}`)
	})
	tokenRun  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[A-Za-z0-9+/=_-]{32,}`) })
	secretKey = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)(token|secret|password|passwd|api[_-]?key|private[_-]?key|credential)`)
	})
)

// digestPath reports whether path holds a digest or revision, whose
// values are high-entropy by design and are checked as digests instead.
func digestPath(path string) bool {
	switch {
	case path == "adapter.sha256", path == "source.revision":
		return true
	case strings.HasPrefix(path, "artifacts") && strings.Contains(path, ".digest."):
		return true
	}
	return false
}

// lintCredentials walks n (the descriptor's JSON tree) at path.
func lintCredentials(n *yaml.Node, path string, rep *strictdoc.Report) {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			p := strictdoc.ChildPath(path, k.Value)
			if secretKey().MatchString(k.Value) && hasValue(v) {
				rep.Add(CodeCredential, p, k.Line, "a key named like a credential holds a value; a package names environment variables, never their values")
				continue
			}
			if why := secretLike(k.Value); why != "" {
				rep.Add(CodeCredential, p, k.Line, "the key looks like "+why)
				continue
			}
			lintCredentials(v, p, rep)
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			lintCredentials(c, strictdoc.IndexPath(path, i), rep)
		}
	case yaml.ScalarNode:
		if digestPath(path) {
			return
		}
		if why := secretLike(n.Value); why != "" {
			rep.Add(CodeCredential, path, n.Line, "the value looks like "+why+"; a package names environment variables, never their values")
		}
	}
}

func hasValue(v *yaml.Node) bool {
	switch v.Kind {
	case yaml.ScalarNode:
		return v.Value != "" && strictdoc.KindOf(v) != strictdoc.KindNull && strictdoc.KindOf(v) != strictdoc.KindBool
	case yaml.MappingNode, yaml.SequenceNode:
		return len(v.Content) > 0
	}
	return false
}

// secretLike says what s looks like when it looks like a secret, else "".
func secretLike(s string) string {
	switch {
	case pemBlock().MatchString(s):
		return "a PEM block"
	case jwtLike().MatchString(s):
		return "a JWT"
	case apiKeyLike().MatchString(s):
		return "an API key (sk-...)"
	}
	for _, run := range tokenRun().FindAllString(s, -1) {
		if highEntropy(run) {
			return "a high-entropy token"
		}
	}
	return ""
}

// highEntropy: a run of token characters that is either all hex digits
// mixing letters and digits (a hex secret), or mixes upper case, lower case
// and digits with over 4 bits of Shannon entropy per character (a base62
// or base64 secret). Package names, paths and versions are lower case, and
// environment variable names upper case, so neither is taken for one.
func highEntropy(s string) bool {
	var upper, lower, digits, nonHex bool
	counts := map[rune]int{}
	for _, r := range s {
		counts[r]++
		switch {
		case r >= '0' && r <= '9':
			digits = true
		case r >= 'a' && r <= 'f':
			lower = true
		case r >= 'g' && r <= 'z':
			lower, nonHex = true, true
		case r >= 'A' && r <= 'Z':
			upper, nonHex = true, true
		default:
			nonHex = true
		}
	}
	if !nonHex {
		return digits && lower
	}
	if !upper || !lower || !digits {
		return false
	}
	h, n := 0.0, float64(len(s))
	for _, c := range counts {
		f := float64(c) / n
		h -= f * math.Log2(f)
	}
	return h > 4.0
}
