// Package service runs long-lived adapter services shared by runtimes:
// Fabric-owned services (Prepare launches a service host, which is an
// adapter host in its own process group, private home and deadlines, as a
// runtime's) and attachments to caller-owned services (Attach checks the
// caller's ServiceReference and launches an attachment host that probes
// the service; releasing it never stops the service). It tracks the
// runtimes bound to each service so that Release is refused while one is
// not stopped, keeps the credentials bound runtime hosts receive, and
// answers service-scope health checks.
//
// It must never put a credential value into a handle, an error or a log:
// credentials travel only as environment variables of hosts, and a
// connection holds their names. It must never branch on an adapter id.
package service
