package adapterkit

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/fabric-runtime/fabric/internal/hostproto"
)

// EnvBundledAdapter names the bundled Go adapter a re-executed Fabric
// binary serves as a host (the core sets it from the descriptor's
// runner.builtin). ChildEnv drops it: a harness child is not a host.
const EnvBundledAdapter = hostproto.EnvBundledAdapter

// Dirs are the private directories of one harness in one runtime: Root
// (under the runtime's home, FABRIC_HOME), with the harness's HOME and
// TMPDIR inside. The session removes Root at stop; the runtime's home is
// the core's and stays.
type Dirs struct {
	Root string // <FABRIC_HOME>/<name>
	Home string // Root/home: the harness's HOME (XDG directories inside)
	Tmp  string // Root/tmp: the harness's TMPDIR
}

// DirsUnder lays out the private directories of the harness name under
// the runtime's home fabricHome, without creating them.
func DirsUnder(fabricHome, name string) Dirs {
	root := filepath.Join(fabricHome, name)
	return Dirs{Root: root, Home: filepath.Join(root, "home"), Tmp: filepath.Join(root, "tmp")}
}

// MakeDirs creates the private directories of the harness name: Root
// under the runtime's home fabricHome, or a new directory under the
// system's temporary directory when fabricHome is "" (a host started
// without one), then Home, Tmp and sub (paths relative to Root), all
// 0700. Root must not exist yet: it is removed at stop, so a Root already
// there belongs to another session. On error nothing is left behind but
// what existed before.
func MakeDirs(fabricHome, name string, sub ...string) (Dirs, error) {
	var d Dirs
	if fabricHome != "" {
		d = DirsUnder(fabricHome, name)
		if err := os.Mkdir(d.Root, 0o700); err != nil {
			return Dirs{}, err
		}
	} else {
		root, err := os.MkdirTemp("", "fabric-"+name+"-")
		if err != nil {
			return Dirs{}, err
		}
		d = DirsUnder(filepath.Dir(root), filepath.Base(root))
	}
	for _, dir := range append([]string{d.Home, d.Tmp}, sub...) {
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(d.Root, dir)
		}
		if err := os.MkdirAll(dir, 0o700); err != nil {
			_ = os.RemoveAll(d.Root)
			return Dirs{}, err
		}
	}
	return d, nil
}

// Env returns the variables that point a harness into the directories:
// HOME, TMPDIR (and TMP, TEMP) and the four XDG base directories inside
// Home, in that order. Pass them to ChildEnv.
func (d Dirs) Env() []string {
	return []string{
		"HOME=" + d.Home,
		"TMPDIR=" + d.Tmp, "TMP=" + d.Tmp, "TEMP=" + d.Tmp,
		"XDG_CONFIG_HOME=" + filepath.Join(d.Home, ".config"),
		"XDG_DATA_HOME=" + filepath.Join(d.Home, ".local", "share"),
		"XDG_CACHE_HOME=" + filepath.Join(d.Home, ".cache"),
		"XDG_STATE_HOME=" + filepath.Join(d.Home, ".local", "state"),
	}
}

// hostOnly are the variables that describe the host process itself, never
// a harness child (a child Fabric binary that saw them would take itself
// for a host). The runtime's variables (FABRIC_HOME, FABRIC_RUNTIME_ID,
// FABRIC_ARTIFACTS) are not among them.
var hostOnly = [...]string{
	hostproto.EnvChannelFD, hostproto.EnvProtocol, hostproto.EnvBundledAdapter, hostproto.EnvGoMaxProcs,
}

// ChildEnv builds the environment of a harness child from base, the
// host's (os.Environ()). It keeps base in order without Fabric's host
// protocol variables, without the names drop matches and without the
// names set assigns, then appends set ("NAME=value", in order; of two
// entries for one name the later wins, at the earlier's place). A drop
// entry is a name, or a pattern with one "*" at its start or end
// ("OPENCODE_*", "*_API_KEY"). Entries of base without "=" are dropped.
func ChildEnv(base, drop []string, set ...string) []string {
	assigned := make(map[string]int, len(set)) // name -> index in out
	for _, kv := range set {
		k, _, _ := strings.Cut(kv, "=")
		assigned[k] = -1
	}
	out := make([]string, 0, len(base)+len(set))
	for _, kv := range base {
		k, _, ok := strings.Cut(kv, "=")
		if _, set := assigned[k]; !ok || k == "" || set || dropped(k, drop) {
			continue
		}
		out = append(out, kv)
	}
	for _, kv := range set {
		k, _, _ := strings.Cut(kv, "=")
		if i := assigned[k]; i >= 0 {
			out[i] = kv
			continue
		}
		assigned[k] = len(out)
		out = append(out, kv)
	}
	return out
}

// dropped reports whether a base variable stays out of a child's
// environment.
func dropped(k string, drop []string) bool {
	for _, h := range hostOnly {
		if k == h {
			return true
		}
	}
	for _, p := range drop {
		switch {
		case p == k:
			return true
		case len(p) > 1 && strings.HasSuffix(p, "*") && strings.HasPrefix(k, p[:len(p)-1]):
			return true
		case len(p) > 1 && strings.HasPrefix(p, "*") && strings.HasSuffix(k, p[1:]):
			return true
		}
	}
	return false
}
