// Package contract holds the JSON documents that Fabric exchanges with its
// callers (northbound: FabricConfig, RunPlan, RunRequest, RunResult, handles,
// check reports) and with adapter hosts (southbound: AgentConfig,
// RuntimeContext, AgentRunRequest, AgentRunResult).
//
// Field names and defaults follow upstream NeMo Fabric so that existing
// configs, descriptors and adapter hosts work unchanged. The package holds
// types and shape checks only: it must never load files, start processes or
// talk to the network. The JSON Schemas under schemas/ are generated from
// these types (see Schemas).
package contract
