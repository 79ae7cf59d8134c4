// Package adapterkit is what an adapter author in Go imports: implement
// Adapter and Session, then call Serve from the host process's main. Serve
// speaks the core's local-host protocol: v2 (JSON-RPC 2.0 on fd 3, with
// events, cancel and health while a turn runs) or v1 (upstream-compatible
// newline-delimited JSON on stdin/stdout, answered as upstream's
// TypeScript host answers).
//
// A minimal host:
//
//	func main() {
//		if err := adapterkit.Serve(context.Background(), myAdapter{}); err != nil {
//			fmt.Fprintln(os.Stderr, err)
//			os.Exit(1)
//		}
//	}
//
// Serve runs one runtime: Adapter.Start once, Session.Invoke one turn at a
// time, Session.Health concurrently with a turn (v2), Session.Stop once on
// the way out, whatever ends the host (stop, end of stream, failed start,
// SIGTERM/SIGINT). Adapter panics are recovered and reported with stable
// lifecycle_* codes; the host stays up and fails only the runtime.
//
// An adapter whose descriptor declares capabilities.service also
// implements ServiceAdapter (and optionally ServiceAttacher): on protocol
// v2 the core may start a host with service_start or service_attach
// instead of start; that host runs one ServiceSession, answers health,
// refuses invoke and ends after stop. Runtimes bound to the service get
// its connection in StartInput.Service and its credentials as
// environment variables.
//
// proc supervises the harness's own child processes. What
// every harness child needs is here too: MakeDirs gives it private
// directories (HOME, TMPDIR, XDG) under the runtime's home, ChildEnv its
// environment (the host's, without the host protocol's variables), and
// StartInput.Log the host's logger. Wrap and Errorf (with %w) build an
// *Error that keeps its cause; the core gets its code and message.
//
// What adapterkit must never do:
//   - write anything but protocol frames to the protocol channel, or let a
//     stray write to stdout by adapter code reach it (v1 moves the protocol
//     to private descriptors first); the one exception is the documented
//     fault injection of the scripted adapter (internal/hostfault);
//   - log payloads: requests and results may carry secrets; logs go to
//     stderr, which the core captures and scrubs;
//   - run two turns at once, or call Session.Stop twice;
//   - mutate the process environment;
//   - report a credential value in a service's connection or metadata.
package adapterkit
