package procfs

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Listener is a TCP socket in the LISTEN state, as procfs reports it.
type Listener struct {
	// Addr is the local address and port. An unspecified address (0.0.0.0
	// or ::) listens on every address; IPv4-mapped IPv6 addresses are kept
	// as the kernel reports them.
	Addr netip.AddrPort
	// Inode identifies the socket; /proc/<pid>/fd links to it as
	// "socket:[<inode>]".
	Inode uint64
}

// tcpListen is the st value of a LISTEN socket (TCP_LISTEN in the kernel).
const tcpListen = 0x0A

// tcpEntry is one line of /proc/net/tcp or /proc/net/tcp6.
type tcpEntry struct {
	Local  netip.AddrPort
	Remote netip.AddrPort
	State  uint8
	Inode  uint64
}

// parseTCPLine parses one socket line of /proc/net/tcp or tcp6 (not the
// header). The kernel prints addresses as 32-bit words in host byte order,
// one word for IPv4 and four for IPv6, then ':' and the port in hex:
//
//	sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
//	 0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 12345 1 ...
func parseTCPLine(line string) (tcpEntry, error) {
	f := strings.Fields(line)
	if len(f) < 10 {
		return tcpEntry{}, fmt.Errorf("%d fields, want at least 10", len(f))
	}
	sl, ok := strings.CutSuffix(f[0], ":")
	if !ok {
		return tcpEntry{}, fmt.Errorf("slot %q: missing ':'", f[0])
	}
	if _, err := strconv.ParseUint(sl, 10, 64); err != nil {
		return tcpEntry{}, fmt.Errorf("slot %q: %w", f[0], err)
	}
	local, err := parseHexAddrPort(f[1])
	if err != nil {
		return tcpEntry{}, fmt.Errorf("local address: %w", err)
	}
	remote, err := parseHexAddrPort(f[2])
	if err != nil {
		return tcpEntry{}, fmt.Errorf("remote address: %w", err)
	}
	if local.Addr().Is4() != remote.Addr().Is4() {
		return tcpEntry{}, errors.New("local and remote address families differ")
	}
	st, err := parseHex(f[3], 2, 8)
	if err != nil {
		return tcpEntry{}, fmt.Errorf("state: %w", err)
	}
	inode, err := strconv.ParseUint(f[9], 10, 64)
	if err != nil {
		return tcpEntry{}, fmt.Errorf("inode: %w", err)
	}
	return tcpEntry{Local: local, Remote: remote, State: uint8(st), Inode: inode}, nil
}

// parseHex parses 1 to maxLen hex digits, without sign or prefix, into a
// value of at most bits bits.
func parseHex(s string, maxLen, bits int) (uint64, error) {
	if len(s) == 0 || len(s) > maxLen {
		return 0, fmt.Errorf("%q: want 1 to %d hex digits", s, maxLen)
	}
	return strconv.ParseUint(s, 16, bits) // base 16 rejects signs, prefixes and '_'
}

// parseHexAddrPort parses "0100007F:1F90" (IPv4) or 32 hex digits ":" port
// (IPv6).
func parseHexAddrPort(s string) (netip.AddrPort, error) {
	a, p, ok := strings.Cut(s, ":")
	if !ok {
		return netip.AddrPort{}, fmt.Errorf("%q: missing ':'", s)
	}
	port, err := parseHex(p, 4, 16)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("port: %w", err)
	}
	var b [16]byte
	switch len(a) {
	case 8, 32:
	default:
		return netip.AddrPort{}, fmt.Errorf("address %q: want 8 or 32 hex digits", a)
	}
	for i := 0; i < len(a); i += 8 {
		w, err := parseHex(a[i:i+8], 8, 32)
		if err != nil {
			return netip.AddrPort{}, fmt.Errorf("address: %w", err)
		}
		binary.NativeEndian.PutUint32(b[i/2:], uint32(w))
	}
	var addr netip.Addr
	if len(a) == 8 {
		addr = netip.AddrFrom4([4]byte(b[:4]))
	} else {
		addr = netip.AddrFrom16(b)
	}
	return netip.AddrPortFrom(addr, uint16(port)), nil
}

// readTCPFile calls fn for each socket line of a /proc/net/tcp-format file.
func readTCPFile(path string, fn func(tcpEntry)) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		fields := strings.Fields(line)
		if len(fields) == 0 || fields[0] == "sl" { // blank or header
			continue
		}
		e, err := parseTCPLine(line)
		if err != nil {
			return fmt.Errorf("procfs: %s:%d: %w", path, n, err)
		}
		fn(e)
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("procfs: %s: %w", path, err)
	}
	return nil
}

// ListeningTCP returns the TCP sockets in the LISTEN state listed in
// net/tcp and net/tcp6, IPv4 first. A missing tcp6 (IPv6 disabled) is not an
// error. For the real procfs these are the sockets of the caller's network
// namespace.
func (f FS) ListeningTCP() ([]Listener, error) {
	var out []Listener
	add := func(e tcpEntry) {
		if e.State == tcpListen {
			out = append(out, Listener{Addr: e.Local, Inode: e.Inode})
		}
	}
	if err := readTCPFile(f.path("net", "tcp"), add); err != nil {
		return nil, err
	}
	if err := readTCPFile(f.path("net", "tcp6"), add); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	return out, nil
}

// PortInUse reports whether any TCP socket listens on port, on any address,
// according to net/tcp and tcp6.
func (f FS) PortInUse(port uint16) (bool, error) {
	ls, err := f.ListeningTCP()
	if err != nil {
		return false, err
	}
	for _, l := range ls {
		if l.Addr.Port() == port {
			return true, nil
		}
	}
	return false, nil
}

// SocketOwners returns, in ascending order, the pids whose open file
// descriptors (<pid>/fd/*) include the socket with the given inode. With
// pids empty every process is scanned and processes that cannot be read
// (gone, or not ours) are skipped. With pids given, only those are scanned;
// a pid that has exited is skipped, and other read errors are returned when
// no owner was found.
func (f FS) SocketOwners(inode uint64, pids []int) ([]int, error) {
	all := len(pids) == 0
	if all {
		var err error
		if pids, err = f.Pids(); err != nil {
			return nil, err
		}
	}
	want := func(n uint64) bool { return n == inode }
	var owners []int
	var errs []error
	for _, pid := range pids {
		ok, err := f.HoldsSocket(pid, want)
		switch {
		case ok:
			owners = append(owners, pid)
		case err == nil:
		case all && errors.Is(err, fs.ErrPermission):
		default:
			errs = append(errs, err)
		}
	}
	if len(owners) == 0 && len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	slices.Sort(owners)
	return slices.Compact(owners), nil
}

// HoldsSocket reports whether pid has an open descriptor for a socket whose
// inode satisfies want. A process that is gone holds none.
func (f FS) HoldsSocket(pid int, want func(inode uint64) bool) (bool, error) {
	dir := f.path(strconv.Itoa(pid), "fd")
	d, err := os.Open(dir)
	if err != nil {
		if gone(err) {
			return false, nil
		}
		return false, fmt.Errorf("procfs: %w", err)
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		if gone(err) {
			return false, nil
		}
		return false, fmt.Errorf("procfs: %w", err)
	}
	for _, n := range names {
		target, err := os.Readlink(filepath.Join(dir, n))
		if err != nil {
			if gone(err) {
				continue // descriptor closed meanwhile
			}
			return false, fmt.Errorf("procfs: %w", err)
		}
		if ino, ok := socketInode(target); ok && want(ino) {
			return true, nil
		}
	}
	return false, nil
}

// socketInode parses a descriptor link target of the form "socket:[12345]".
func socketInode(target string) (uint64, bool) {
	s, ok := strings.CutPrefix(target, "socket:[")
	if !ok {
		return 0, false
	}
	s, ok = strings.CutSuffix(s, "]")
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseUint(s, 10, 64)
	return n, err == nil
}

// PortHolders returns, in ascending order, the pids of the processes that
// hold a TCP socket listening on port (any address); empty when nobody
// listens there. A listener whose holders cannot be seen (another user's
// process) is reported as pid 0.
func (f FS) PortHolders(port uint16) ([]int, error) {
	ls, err := f.ListeningTCP()
	if err != nil {
		return nil, err
	}
	seen := map[int]bool{}
	var out []int
	for _, l := range ls {
		if l.Addr.Port() != port {
			continue
		}
		owners, _ := f.SocketOwners(l.Inode, nil)
		if len(owners) == 0 {
			owners = []int{0}
		}
		for _, pid := range owners {
			if !seen[pid] {
				seen[pid] = true
				out = append(out, pid)
			}
		}
	}
	slices.Sort(out)
	return out, nil
}
