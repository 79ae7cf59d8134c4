// Package runtime owns one runtime from its identity on: New mints its id
// and builds its bound handle; Start launches its adapter host with the
// telemetry its caller hands it (Telemetry: the trace context, the Relay
// listener). It owns the host, the state machine (starting, active,
// invoking, stopping, stopped, failed), ordered invocations (one at a
// time; a second is refused at once with runtime_busy), cancellation,
// deadlines, and the normalization of every adapter result into a
// RunResult.
//
// It never retries, respawns or replays: a host that crashes or misses a
// deadline leaves the runtime failed. It never names an adapter; runner
// details come from the plan's descriptor.
package runtime
