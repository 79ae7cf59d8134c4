// Package clifront is fabric's command line: the program a person or a
// script runs as fabric. It knows internal/cli's command tree (commands,
// flags, help; tree_gen.go, written from the tree by internal/clifront/gen
// and checked current by a test) but none of what the commands do. It
// answers help, shell completion and the usage errors cobra finds itself
// (an unknown command or flag) exactly as the tree does, and replaces
// itself with fabric-core for every command that runs, with the command
// line unchanged: fabric-core parses it again and does the work.
//
// Why: Go runs the init of every linked package in every process, and
// fabric-core links the runtime, every bundled adapter, telemetry, the
// HTTP and TLS stacks, YAML and JSON Schema. Help, completion (run by the
// shell at every TAB) and a mistyped command now cost what a small cobra
// program costs; a command that runs costs one exec more (bench/cli).
//
// It must import nothing heavy: deptest holds cmd/fabric to that.
package clifront
