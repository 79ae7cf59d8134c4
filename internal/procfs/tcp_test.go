package procfs

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The testdata files hold lines copied from a little-endian machine; the
// kernel prints address words in host byte order.
func skipUnlessLittleEndian(t testing.TB) {
	t.Helper()
	if binary.NativeEndian.Uint16([]byte{1, 0}) != 1 {
		t.Skip("testdata holds little-endian /proc/net/tcp lines")
	}
}

// formatTCPLine prints e the way the kernel does.
func formatTCPLine(e tcpEntry) string {
	return fmt.Sprintf("%4d: %s %s %02X 00000000:00000000 00:00000000 00000000  1000        0 %d 1 0000000000000000 100 0 0 10 0",
		7, hexAddrPort(e.Local), hexAddrPort(e.Remote), e.State, e.Inode)
}

func hexAddrPort(ap netip.AddrPort) string {
	var b strings.Builder
	raw := ap.Addr().AsSlice()
	for i := 0; i < len(raw); i += 4 {
		fmt.Fprintf(&b, "%08X", binary.NativeEndian.Uint32(raw[i:]))
	}
	fmt.Fprintf(&b, ":%04X", ap.Port())
	return b.String()
}

func TestParseTCPLine(t *testing.T) {
	skipUnlessLittleEndian(t)
	ap := netip.MustParseAddrPort
	tests := []struct {
		name string
		line string
		want tcpEntry
	}{
		{
			name: "ipv4 listen",
			line: "   0: 0100007F:1F90 00000000:0000 0A 00000000:00000001 00:00000000 00000000  1000        0 1001 2 00000000c800f7ed 100 0 0 10 0     ",
			want: tcpEntry{Local: ap("127.0.0.1:8080"), Remote: ap("0.0.0.0:0"), State: tcpListen, Inode: 1001},
		},
		{
			name: "ipv4 established",
			line: "   2: 0100007F:A23C 0100007F:1F90 01 00000000:00000000 00:00000000 00000000  1000        0 1002 2 0000000054c9e2da 20 0 0 10 -1",
			want: tcpEntry{Local: ap("127.0.0.1:41532"), Remote: ap("127.0.0.1:8080"), State: 1, Inode: 1002},
		},
		{
			name: "ipv4 time wait, short line",
			line: "   4: 0F02000A:0016 0100000A:C350 06 00000000:00000000 03:00000D2B 00000000     0        0 0 3 0000000000000000",
			want: tcpEntry{Local: ap("10.0.2.15:22"), Remote: ap("10.0.0.1:50000"), State: 6},
		},
		{
			name: "ipv6 any",
			line: "   0: 00000000000000000000000000000000:E111 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 8009 1 000000006c78752c 100 0 0 10 0",
			want: tcpEntry{Local: ap("[::]:57617"), Remote: ap("[::]:0"), State: tcpListen, Inode: 8009},
		},
		{
			name: "ipv6 loopback",
			line: "   2: 00000000000000000000000001000000:1F90 00000000000000000000000000000000:0000 0A 00000000:00000001 00:00000000 00000000  1000        0 8008 2 00000000a8b8dd89 100 0 0 10 0",
			want: tcpEntry{Local: ap("[::1]:8080"), Remote: ap("[::]:0"), State: tcpListen, Inode: 8008},
		},
		{
			name: "ipv4-mapped ipv6",
			line: "   1: 0000000000000000FFFF00000100007F:DC87 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 8010 1 00000000bb830f91 100 0 0 10 0",
			want: tcpEntry{Local: ap("[::ffff:127.0.0.1]:56455"), Remote: ap("[::]:0"), State: tcpListen, Inode: 8010},
		},
		{
			name: "documentation address, lower case hex",
			line: "9: b80d0120000000000000000001000000:0050 00000000000000000000000000000000:0000 0a 0:0 0:0 0 0 0 42",
			want: tcpEntry{Local: ap("[2001:db8::1]:80"), Remote: ap("[::]:0"), State: tcpListen, Inode: 42},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseTCPLine(tt.line)
			if err != nil {
				t.Fatalf("parseTCPLine: %v", err)
			}
			if diff := cmp.Diff(tt.want, got, cmp.Comparer(func(a, b netip.AddrPort) bool { return a == b })); diff != "" {
				t.Errorf("parseTCPLine mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseTCPLineMalformed(t *testing.T) {
	const good = "   0: 0100007F:1F90 00000000:0000 0A 00000000:00000001 00:00000000 00000000  1000        0 1001 2 0 100 0 0 10 0"
	tests := map[string]string{
		"empty":            "",
		"header":           "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode",
		"too few fields":   "   0: 0100007F:1F90 00000000:0000 0A 00000000:00000001 00:00000000 00000000  1000        0",
		"slot without :":   strings.Replace(good, "0:", "0", 1),
		"slot not number":  strings.Replace(good, "0:", "x:", 1),
		"address short":    strings.Replace(good, "0100007F:1F90", "100007F:1F90", 1),
		"address 16 bytes": strings.Replace(good, "0100007F:1F90", "0100007F0100007F:1F90", 1),
		"address not hex":  strings.Replace(good, "0100007F:1F90", "0100007G:1F90", 1),
		"address signed":   strings.Replace(good, "0100007F:1F90", "+100007F:1F90", 1),
		"no port":          strings.Replace(good, "0100007F:1F90", "0100007F", 1),
		"port too long":    strings.Replace(good, "0100007F:1F90", "0100007F:11F90", 1),
		"port empty":       strings.Replace(good, "0100007F:1F90", "0100007F:", 1),
		"remote malformed": strings.Replace(good, "00000000:0000", "0000:0000", 1),
		"families differ":  strings.Replace(good, "00000000:0000", "00000000000000000000000000000000:0000", 1),
		"state too long":   strings.Replace(good, " 0A ", " 10A ", 1),
		"state not hex":    strings.Replace(good, " 0A ", " ZZ ", 1),
		"inode not number": strings.Replace(good, " 1001 ", " 0x3E9 ", 1),
		"inode negative":   strings.Replace(good, " 1001 ", " -1 ", 1),
	}
	for name, line := range tests {
		t.Run(name, func(t *testing.T) {
			if line == good {
				t.Fatal("test case did not change the line")
			}
			if e, err := parseTCPLine(line); err == nil {
				t.Errorf("parseTCPLine(%q) = %+v, want error", line, e)
			}
		})
	}
}

func TestListeningTCP(t *testing.T) {
	skipUnlessLittleEndian(t)
	got, err := fakeProc(t).ListeningTCP()
	if err != nil {
		t.Fatal(err)
	}
	ap := netip.MustParseAddrPort
	want := []Listener{
		{ap("127.0.0.1:8080"), 1001},
		{ap("0.0.0.0:2024"), 1605},
		{ap("[::]:57617"), 8009},
		{ap("[::ffff:127.0.0.1]:56455"), 8010},
		{ap("[::1]:8080"), 8008},
	}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b netip.AddrPort) bool { return a == b })); diff != "" {
		t.Errorf("ListeningTCP mismatch (-want +got):\n%s", diff)
	}
}

func TestListeningTCPFiles(t *testing.T) {
	skipUnlessLittleEndian(t)
	write := func(t *testing.T, root, name, body string) {
		must(t, os.MkdirAll(filepath.Join(root, "net"), 0o755))
		must(t, os.WriteFile(filepath.Join(root, "net", name), []byte(body), 0o644))
	}
	const header = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
	const line = "   0: 0100007F:1F90 00000000:0000 0A 00000000:00000001 00:00000000 00000000  1000        0 1001 2 0 100 0 0 10 0\n"

	t.Run("no tcp6", func(t *testing.T) {
		root := t.TempDir()
		write(t, root, "tcp", header+line)
		got, err := FS(root).ListeningTCP()
		if err != nil || len(got) != 1 {
			t.Fatalf("ListeningTCP = %v, %v; want one listener", got, err)
		}
	})
	t.Run("no tcp", func(t *testing.T) {
		root := t.TempDir()
		write(t, root, "tcp6", header)
		if _, err := FS(root).ListeningTCP(); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("ListeningTCP error = %v, want fs.ErrNotExist", err)
		}
	})
	t.Run("malformed line", func(t *testing.T) {
		root := t.TempDir()
		write(t, root, "tcp", header+line+"   1: garbage\n")
		_, err := FS(root).ListeningTCP()
		if err == nil || !strings.Contains(err.Error(), "tcp:3:") {
			t.Fatalf("ListeningTCP error = %v, want one naming tcp:3", err)
		}
	})
	t.Run("empty and blank", func(t *testing.T) {
		root := t.TempDir()
		write(t, root, "tcp", "")
		write(t, root, "tcp6", header+"\n")
		if got, err := FS(root).ListeningTCP(); err != nil || len(got) != 0 {
			t.Fatalf("ListeningTCP = %v, %v; want none", got, err)
		}
	})
}

func TestPortInUse(t *testing.T) {
	skipUnlessLittleEndian(t)
	root := fakeProc(t)
	for port, want := range map[uint16]bool{
		8080:  true,  // IPv4 and IPv6 loopback
		2024:  true,  // 0.0.0.0
		57617: true,  // ::
		56455: true,  // ::ffff:127.0.0.1
		22:    false, // only a TIME_WAIT socket
		41532: false, // only an established socket
		9:     false,
	} {
		got, err := root.PortInUse(port)
		if err != nil || got != want {
			t.Errorf("PortInUse(%d) = %v, %v; want %v", port, got, err, want)
		}
	}
}

func TestSocketOwners(t *testing.T) {
	root := fakeProc(t)
	tests := []struct {
		name  string
		inode uint64
		pids  []int
		want  []int
	}{
		{"all, ipv4", 1001, nil, []int{123}},
		{"all, ipv6", 8008, nil, []int{456}},
		{"all, other group", 9999, nil, []int{900}},
		{"all, unknown inode", 4242, nil, nil},
		{"given pids", 1605, []int{123, 456}, []int{456}},
		{"given pids miss", 8008, []int{123, 900}, nil},
		{"exited pid skipped", 1001, []int{31337, 123}, []int{123}},
		{"zombie has no fds", 1001, []int{789}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := root.SocketOwners(tt.inode, tt.pids)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("SocketOwners mismatch (-want +got):\n%s", diff)
			}
		})
	}

	t.Run("unreadable given pid", func(t *testing.T) {
		root := t.TempDir()
		must(t, os.MkdirAll(filepath.Join(root, "55"), 0o755))
		must(t, os.WriteFile(filepath.Join(root, "55", "fd"), nil, 0o644)) // not a directory
		if got, err := FS(root).SocketOwners(1, []int{55}); err == nil {
			t.Fatalf("SocketOwners = %v, nil; want error", got)
		}
	})
}

func TestSocketInode(t *testing.T) {
	for target, want := range map[string]uint64{"socket:[12345]": 12345, "socket:[0]": 0} {
		if got, ok := socketInode(target); !ok || got != want {
			t.Errorf("socketInode(%q) = %d, %v", target, got, ok)
		}
	}
	for _, target := range []string{"pipe:[12]", "socket:[12", "socket:12]", "socket:[]", "socket:[-1]", "/dev/null", "anon_inode:[eventfd]"} {
		if got, ok := socketInode(target); ok {
			t.Errorf("socketInode(%q) = %d, true; want false", target, got)
		}
	}
}

func FuzzParseTCPLine(f *testing.F) {
	for _, name := range []string{"tcp", "tcp6"} {
		b, err := os.ReadFile(filepath.Join("testdata", "proc", "net", name))
		if err != nil {
			f.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			f.Add(line)
		}
	}
	f.Add("0: 0:0 0:0 0 0 0 0 0 0 0")
	f.Fuzz(func(t *testing.T, line string) {
		e, err := parseTCPLine(line)
		if err != nil {
			return
		}
		if e.Local.Addr().Is4() != e.Remote.Addr().Is4() || !e.Local.IsValid() || !e.Remote.IsValid() {
			t.Fatalf("parseTCPLine(%q) = %+v: inconsistent addresses", line, e)
		}
		again, err := parseTCPLine(formatTCPLine(e))
		if err != nil {
			t.Fatalf("reparse of %q: %v", formatTCPLine(e), err)
		}
		if again != e {
			t.Fatalf("round trip of %q: got %+v, want %+v", line, again, e)
		}
	})
}
