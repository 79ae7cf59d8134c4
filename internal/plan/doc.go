// Package plan turns a FabricConfig and the selected adapter descriptor into
// a RunPlan. Every compatibility decision lives here: settings, model and
// tool-definition schemas, the descriptor's `accepts` list, instruction
// modes, tool policy, capability routes, lifecycle limits and telemetry.
//
// Planning is pure: it never starts a process, touches the network or reads
// the value of a credential. It never branches on an adapter id; everything
// adapter-specific comes from the descriptor.
package plan
