// Package runtime owns one started runtime: its adapter host, its state
// machine (starting, active, invoking, stopping, stopped, failed), ordered
// invocations (one at a time; a second is refused at once with
// runtime_busy), cancellation, deadlines, and the normalization of every
// adapter result into a RunResult.
//
// It never retries, respawns or replays: a host that crashes or misses a
// deadline leaves the runtime failed. It never names an adapter; runner
// details come from the plan's descriptor.
package runtime
