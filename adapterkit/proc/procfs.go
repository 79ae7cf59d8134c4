package proc

import (
	"bufio"
	"bytes"
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
	"syscall"
)

// DefaultRoot is the procfs root used when a root argument is empty.
const DefaultRoot = "/proc"

func rootOr(root string) string {
	if root == "" {
		return DefaultRoot
	}
	return root
}

// gone reports whether err means the process (or one of its files) no longer
// exists: the directory is gone, or it went away between open and read.
func gone(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH)
}

// procStat is the part of /proc/<pid>/stat this package reads.
type procStat struct {
	State     byte   // field 3: R, S, D, Z, T, ...
	Pgrp      int    // field 5
	StartTime uint64 // field 22, clock ticks after boot
}

// zombie reports whether the process has exited and waits to be reaped (or is
// being torn down). It holds no resources a signal could release.
func (s procStat) zombie() bool { return s.State == 'Z' || s.State == 'X' || s.State == 'x' }

// parseStat parses the contents of /proc/<pid>/stat. The command name (field
// 2) may hold spaces and parentheses, so fields are counted from the last ')'.
func parseStat(b []byte) (procStat, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || bytes.IndexByte(b, '(') < 0 {
		return procStat{}, errors.New("malformed stat: no command name")
	}
	// f[0] is field 3 (state), so field n is f[n-3].
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 {
		return procStat{}, fmt.Errorf("malformed stat: %d fields after command name", len(f))
	}
	if len(f[0]) != 1 {
		return procStat{}, fmt.Errorf("malformed stat: state %q", f[0])
	}
	pgrp, err := strconv.Atoi(f[2])
	if err != nil {
		return procStat{}, fmt.Errorf("malformed stat: pgrp: %w", err)
	}
	start, err := strconv.ParseUint(f[19], 10, 64)
	if err != nil {
		return procStat{}, fmt.Errorf("malformed stat: starttime: %w", err)
	}
	return procStat{State: f[0][0], Pgrp: pgrp, StartTime: start}, nil
}

// readStat reads <root>/<pid>/stat. When the process does not exist the
// error satisfies errors.Is(err, fs.ErrNotExist).
func readStat(root string, pid int) (procStat, error) {
	b, err := os.ReadFile(filepath.Join(root, strconv.Itoa(pid), "stat"))
	if err != nil {
		if gone(err) {
			return procStat{}, fmt.Errorf("proc: pid %d: %w", pid, fs.ErrNotExist)
		}
		return procStat{}, err
	}
	st, err := parseStat(b)
	if err != nil {
		return procStat{}, fmt.Errorf("proc: pid %d: %w", pid, err)
	}
	return st, nil
}

// pidsIn lists the numeric entries of root, in ascending order.
func pidsIn(root string) ([]int, error) {
	d, err := os.Open(root)
	if err != nil {
		return nil, err
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return nil, err
	}
	pids := make([]int, 0, len(names))
	for _, n := range names {
		if n == "" || n[0] < '1' || n[0] > '9' {
			continue
		}
		if pid, err := strconv.Atoi(n); err == nil && pid > 0 {
			pids = append(pids, pid)
		}
	}
	slices.Sort(pids)
	return pids, nil
}

// groupMembers returns the live (not zombie) processes under root whose
// process group is pgid, in ascending order.
func groupMembers(root string, pgid int) ([]int, error) {
	pids, err := pidsIn(root)
	if err != nil {
		return nil, err
	}
	var out []int
	for _, pid := range pids {
		st, err := readStat(root, pid)
		if err != nil {
			if gone(err) {
				continue
			}
			return nil, err
		}
		if st.Pgrp == pgid && !st.zombie() {
			out = append(out, pid)
		}
	}
	return out, nil
}

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
			return fmt.Errorf("proc: %s:%d: %w", path, n, err)
		}
		fn(e)
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("proc: %s: %w", path, err)
	}
	return nil
}

// ListeningTCP returns the TCP sockets in the LISTEN state listed in
// <root>/net/tcp and <root>/net/tcp6 (root "" means DefaultRoot), IPv4 first.
// A missing tcp6 (IPv6 disabled) is not an error. For the real procfs these
// are the sockets of the caller's network namespace.
func ListeningTCP(root string) ([]Listener, error) {
	root = rootOr(root)
	var out []Listener
	add := func(e tcpEntry) {
		if e.State == tcpListen {
			out = append(out, Listener{Addr: e.Local, Inode: e.Inode})
		}
	}
	if err := readTCPFile(filepath.Join(root, "net", "tcp"), add); err != nil {
		return nil, err
	}
	if err := readTCPFile(filepath.Join(root, "net", "tcp6"), add); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	return out, nil
}

// PortInUse reports whether any TCP socket listens on port, on any address,
// according to <root>/net/tcp and tcp6.
func PortInUse(root string, port uint16) (bool, error) {
	ls, err := ListeningTCP(root)
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
// descriptors (<root>/<pid>/fd/*) include the socket with the given inode.
// With pids empty every process under root is scanned and processes that
// cannot be read (gone, or not ours) are skipped. With pids given, only those
// are scanned; a pid that has exited is skipped, and other read errors are
// returned when no owner was found.
func SocketOwners(root string, inode uint64, pids []int) ([]int, error) {
	root = rootOr(root)
	all := len(pids) == 0
	if all {
		var err error
		if pids, err = pidsIn(root); err != nil {
			return nil, err
		}
	}
	want := func(n uint64) bool { return n == inode }
	var owners []int
	var errs []error
	for _, pid := range pids {
		ok, err := holdsSocket(root, pid, want)
		switch {
		case ok:
			owners = append(owners, pid)
		case err == nil, gone(err):
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

// holdsSocket reports whether pid has an open descriptor for a socket whose
// inode satisfies want.
func holdsSocket(root string, pid int, want func(uint64) bool) (bool, error) {
	dir := filepath.Join(root, strconv.Itoa(pid), "fd")
	d, err := os.Open(dir)
	if err != nil {
		return false, err
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return false, err
	}
	for _, n := range names {
		target, err := os.Readlink(filepath.Join(dir, n))
		if err != nil {
			if gone(err) {
				continue // descriptor closed meanwhile
			}
			return false, err
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

// PortHolders returns, in ascending order, the pids of the processes under
// root that hold a TCP socket listening on port (any address); empty when
// nobody listens there. A listener whose holders cannot be seen (another
// user's process) is reported as pid 0.
func PortHolders(root string, port uint16) ([]int, error) {
	ls, err := ListeningTCP(root)
	if err != nil {
		return nil, err
	}
	seen := map[int]bool{}
	var out []int
	for _, l := range ls {
		if l.Addr.Port() != port {
			continue
		}
		owners, _ := SocketOwners(root, l.Inode, nil)
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
