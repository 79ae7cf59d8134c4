// Package bundled lists the adapters compiled into Fabric: their embedded
// descriptors for the catalog, their runtime packages (Packages), and
// their hosts for re-execution (ServeHost). Nothing registers them
// globally: an SDK client opts in with
// fabric.WithBundledAdapters(bundled.Adapters()), and a program that
// hosts them calls ServeHost first thing in main; Fabric's binaries do
// both. It links no planning or validation code, so that a host process
// starts fast.
package bundled
