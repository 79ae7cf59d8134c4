// Package bundled lists the adapters compiled into Fabric: their embedded
// descriptors for the catalog, their runtime packages (Packages), and
// their hosts for re-execution. It links
// no planning or validation code, so that a host process starts fast.
package bundled
