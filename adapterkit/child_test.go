package adapterkit

import (
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fabric-runtime/fabric/internal/hostproto"
)

func TestChildEnv(t *testing.T) {
	for _, tc := range []struct {
		name       string
		base, drop []string
		set        []string
		want       []string
	}{
		{
			name: "host protocol variables dropped, the runtime's kept",
			base: []string{"PATH=/bin", hostproto.EnvChannelFD + "=3", hostproto.EnvProtocol + "=fabric.host/v2",
				hostproto.EnvBundledAdapter + "=x", hostproto.EnvGoMaxProcs + "=1", hostproto.EnvHome + "=/h", hostproto.EnvRuntimeID + "=runtime-1"},
			want: []string{"PATH=/bin", hostproto.EnvHome + "=/h", hostproto.EnvRuntimeID + "=runtime-1"},
		},
		{
			name: "names and patterns",
			base: []string{"A=1", "OPENCODE_X=2", "OPENCODE=3", "MY_API_KEY=4", "API_KEY=5", "B=6", "XOPENCODE_=7"},
			drop: []string{"B", "OPENCODE_*", "*_API_KEY"},
			want: []string{"A=1", "OPENCODE=3", "API_KEY=5", "XOPENCODE_=7"},
		},
		{
			name: "a lone star drops nothing",
			base: []string{"A=1"},
			drop: []string{"*", ""},
			want: []string{"A=1"},
		},
		{
			name: "set replaces the base's value and comes last, in order",
			base: []string{"HOME=/root", "A=1", "TMPDIR=/tmp"},
			set:  []string{"TMPDIR=/p/tmp", "HOME=/p/home"},
			want: []string{"A=1", "TMPDIR=/p/tmp", "HOME=/p/home"},
		},
		{
			name: "set is kept although drop matches it",
			base: []string{"PI_X=ambient", "MY_API_KEY=ambient"},
			drop: []string{"PI_*", "*_API_KEY"},
			set:  []string{"MY_API_KEY=configured"},
			want: []string{"MY_API_KEY=configured"},
		},
		{
			name: "the later of two set entries wins at the earlier's place",
			set:  []string{"A=1", "B=2", "A=3"},
			want: []string{"A=3", "B=2"},
		},
		{
			name: "entries without a name are dropped",
			base: []string{"=C:=C:\\", "NOEQUALS", "A=x=y"},
			want: []string{"A=x=y"},
		},
		{
			name: "an empty value is kept",
			base: []string{"A="},
			want: []string{"A="},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ChildEnv(tc.base, tc.drop, tc.set...)
			if !slices.Equal(got, tc.want) {
				t.Errorf("ChildEnv = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestChildEnvLeavesBaseAlone(t *testing.T) {
	base := []string{"HOME=/root", "A=1"}
	_ = ChildEnv(base, []string{"A"}, "HOME=/p")
	if !slices.Equal(base, []string{"HOME=/root", "A=1"}) {
		t.Errorf("base changed: %q", base)
	}
}

func TestDirsUnder(t *testing.T) {
	for _, tc := range []struct {
		home, name string
		want       Dirs
	}{
		{"/rt", "codex", Dirs{Root: "/rt/codex", Home: "/rt/codex/home", Tmp: "/rt/codex/tmp"}},
		{"/rt/", "pi", Dirs{Root: "/rt/pi", Home: "/rt/pi/home", Tmp: "/rt/pi/tmp"}},
	} {
		if got := DirsUnder(tc.home, tc.name); got != tc.want {
			t.Errorf("DirsUnder(%q, %q) = %+v, want %+v", tc.home, tc.name, got, tc.want)
		}
	}
}

func TestDirsEnv(t *testing.T) {
	got := Dirs{Root: "/r", Home: "/r/home", Tmp: "/r/tmp"}.Env()
	want := []string{"HOME=/r/home", "TMPDIR=/r/tmp", "TMP=/r/tmp", "TEMP=/r/tmp",
		"XDG_CONFIG_HOME=/r/home/.config", "XDG_DATA_HOME=/r/home/.local/share",
		"XDG_CACHE_HOME=/r/home/.cache", "XDG_STATE_HOME=/r/home/.local/state"}
	if !slices.Equal(got, want) {
		t.Errorf("Env = %q, want %q", got, want)
	}
}

func TestMakeDirs(t *testing.T) {
	for _, tc := range []struct {
		name    string
		home    func(t *testing.T) string // "" for none
		sub     []string
		wantErr error
	}{
		{name: "under the runtime's home", home: func(t *testing.T) string { return t.TempDir() }, sub: []string{"home/.codex", "logs"}},
		{name: "no runtime home: a temporary directory", home: func(*testing.T) string { return "" }},
		{name: "root already there", home: func(t *testing.T) string {
			h := t.TempDir()
			if err := os.Mkdir(filepath.Join(h, "x"), 0o700); err != nil {
				t.Fatal(err)
			}
			return h
		}, wantErr: fs.ErrExist},
		{name: "no such runtime home", home: func(t *testing.T) string { return filepath.Join(t.TempDir(), "missing") }, wantErr: fs.ErrNotExist},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := tc.home(t)
			d, err := MakeDirs(home, "x", tc.sub...)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("MakeDirs: %v, want %v", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(d.Root) })
			if home != "" && d != DirsUnder(home, "x") {
				t.Errorf("dirs %+v, want %+v", d, DirsUnder(home, "x"))
			}
			if home == "" && (filepath.Dir(d.Root) != filepath.Clean(os.TempDir()) || !strings.HasPrefix(filepath.Base(d.Root), "fabric-x-")) {
				t.Errorf("root %s, want fabric-x-* in %s", d.Root, os.TempDir())
			}
			if d.Home != filepath.Join(d.Root, "home") || d.Tmp != filepath.Join(d.Root, "tmp") {
				t.Errorf("dirs %+v", d)
			}
			for _, dir := range append([]string{d.Root, d.Home, d.Tmp}, tc.sub...) {
				if !filepath.IsAbs(dir) {
					dir = filepath.Join(d.Root, dir)
				}
				fi, err := os.Stat(dir)
				if err != nil {
					t.Fatal(err)
				}
				if !fi.IsDir() || fi.Mode().Perm() != 0o700 {
					t.Errorf("%s: %v", dir, fi.Mode())
				}
			}
		})
	}
}

func TestMakeDirsRemovesWhatItMadeOnError(t *testing.T) {
	home := t.TempDir()
	_, err := MakeDirs(home, "x", "tmp", "/dev/null/sub") // not a directory
	if err == nil {
		t.Fatal("a sub directory under /dev/null was created")
	}
	if _, err := os.Stat(filepath.Join(home, "x")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("root left behind: %v", err)
	}
}

func TestStartInputLog(t *testing.T) {
	if (StartInput{}).Log() == nil {
		t.Fatal("Log of a StartInput without a logger is nil")
	}
	l := slog.New(slog.DiscardHandler)
	if got := (StartInput{Logger: l}).Log(); got != l {
		t.Errorf("Log = %p, want the StartInput's %p", got, l)
	}
}

// Serve gives the adapter the host's logger.
func TestServeGivesStartItsLogger(t *testing.T) {
	l := slog.New(slog.DiscardHandler)
	a := &testAdapter{}
	c := startV2(t, a, WithLogger(l))
	c.start("runtime-1")
	a.mu.Lock()
	got := a.startInput.Logger
	a.mu.Unlock()
	if got != l {
		t.Errorf("StartInput.Logger = %p, want the host's %p", got, l)
	}
	c.mustCall(hostproto.OpStop, hostproto.StopParams{RuntimeID: "runtime-1"}, nil)
	if err := c.waitServed(); err != nil {
		t.Fatal(err)
	}
}
