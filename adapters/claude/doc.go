// Package claude is the bundled Claude Code adapter (id nvidia.fabric.claude,
// compatible with upstream NeMo Fabric's adapter of that id). One runtime is
// one long-lived `claude -p --input-format stream-json --output-format
// stream-json` process, started in its own process group with a private
// CLAUDE_CONFIG_DIR, HOME and TMPDIR under the runtime's home, and driven
// over Claude Code's stream-json control protocol: initialize at start, one
// user message per invoke, an interrupt control request on cancel, end of
// stdin on stop. Stream events become Fabric events (output_delta,
// reasoning_delta, tool_call, tool_result, status) and the result message
// becomes the turn's output, usage and cost.
//
// The claude executable is $FABRIC_CLAUDE_BIN when set, else `claude` on
// PATH.
//
// The package must never write a model key to disk, put it on a command
// line or log it: the key reaches the child only through its environment,
// read at start from the variable the config names. It must never let
// ambient Claude Code configuration (the operator's ~/.claude, ANTHROPIC_*
// or CLAUDE_* variables) reach the child unless the settings ask for it, and
// it must leave no process of the harness's group and no private temporary
// directory behind after Stop.
package claude
