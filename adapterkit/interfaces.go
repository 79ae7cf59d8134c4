package adapterkit

import (
	"context"

	"github.com/fabric-runtime/fabric/contract"
)

// InterfaceSession is implemented by sessions that run harness interfaces
// (dashboards, APIs, terminals; usually through adapterkit/harnessui). The
// host reports Interfaces in its start result, so the runtime's handle
// lists them, and routes health checks that name an interface to
// CheckInterface: an interface's health never decides the runtime's own
// check (rule L4).
type InterfaceSession interface {
	// Interfaces describes the running interfaces; never a credential.
	Interfaces() []contract.InterfaceInfo
	// CheckInterface reports evidence for one interface at one level
	// (live, active, ready). An unknown name is a failed outcome with
	// reason endpoint_unavailable.
	CheckInterface(ctx context.Context, name, level string) (Health, error)
}
