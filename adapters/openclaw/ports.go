package openclaw

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"

	"github.com/fabric-runtime/fabric/proc"
)

// reservation is a Gateway base port this runtime holds: an exclusive
// lock on a per-port file shared by every OpenClaw runtime of this user,
// so that runtimes starting at the same time pick different footprints.
// The kernel releases the lock when the host exits, however it exits.
type reservation struct {
	Base int
	f    *os.File
}

// release gives the port up.
func (r *reservation) release() {
	if r != nil && r.f != nil {
		r.f.Close()
		r.f = nil
	}
}

// portsDir holds the reservation lock files.
func portsDir() string {
	return filepath.Join(os.TempDir(), "fabric-openclaw-ports-"+strconv.Itoa(os.Getuid()))
}

// errPortLocked: another runtime holds the port.
var errPortLocked = errors.New("reserved by another OpenClaw runtime")

// reserve takes base for this runtime if no other runtime holds it and
// nothing listens on base or base+2 (the ports OpenClaw binds, Q7).
func reserve(base int) (*reservation, error) {
	if err := os.MkdirAll(portsDir(), 0o700); err != nil {
		return nil, err
	}
	f, err := lockFile(filepath.Join(portsDir(), strconv.Itoa(base)+".lock"))
	if err != nil {
		return nil, err
	}
	for _, p := range []int{base, base + BrowserPort} {
		inUse, err := proc.PortInUse("", uint16(p))
		if err != nil {
			f.Close()
			return nil, err
		}
		if inUse {
			f.Close()
			return nil, fmt.Errorf("port %d is in use", p)
		}
	}
	return &reservation{Base: base, f: f}, nil
}

// pickBase reserves a base port in r: the footprints base..base+110 tile
// the range, and the search starts at a random tile so that runtimes
// rarely contend.
func pickBase(r PortRange) (*reservation, error) {
	tiles := (r.End - r.Start + 1) / Footprint
	if tiles < 1 {
		return nil, fmt.Errorf("port_range %d-%d is smaller than one Gateway footprint (%d ports)", r.Start, r.End, Footprint)
	}
	first := rand.IntN(tiles)
	var last error
	for i := range tiles {
		base := r.Start + ((first+i)%tiles)*Footprint
		res, err := reserve(base)
		if err == nil {
			return res, nil
		}
		last = err
	}
	return nil, fmt.Errorf("no free Gateway base port in %d-%d (last: %v)", r.Start, r.End, last)
}
