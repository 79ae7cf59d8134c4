// Package contract holds the JSON documents that Fabric exchanges with its
// callers (northbound: FabricConfig, RunPlan, RunRequest, RunResult, handles,
// check reports) and with adapter hosts (southbound: AgentConfig,
// RuntimeContext, AgentRunRequest, AgentRunResult).
//
// Field names and defaults follow upstream NeMo Fabric so that existing
// configs, descriptors and adapter hosts work unchanged; southbound documents
// must validate against the schemas of the npm package
// nemo-fabric-adapter-contract (checked by compat_test.go).
//
// Every document has a JSON Schema (draft 2020-12) generated from these
// types by internal/schemagen, in tests only. The generated files live in
// schemas/<name>.schema.json at the repository root; package schemas
// embeds them and contract/validate checks a document against them, so
// that no program links a schema generator, and a program that only
// exchanges documents, an adapter host say, no validator either.
// Regenerate them with `go test ./internal/schemagen -run
// TestSchemasUpToDate -update` after changing a type (the test fails when
// they drift).
//
// The package holds types and shape checks only: it must never load files,
// start processes or talk to the network.
package contract
