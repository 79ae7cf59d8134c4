// Package pi is the bundled Pi coding agent adapter (id nvidia.fabric.pi-rpc).
// One runtime is one long-lived `pi --mode rpc` process, started in its own
// process group with a private PI_CODING_AGENT_DIR (holding the models.json
// Fabric writes from the config), HOME and TMPDIR under the runtime's home,
// PI_OFFLINE=1, and the workspace as its working directory. Each invoke is
// one `prompt` command; Pi's agent events become Fabric events (output and
// reasoning deltas, tool calls and results) and the turn's assistant
// messages its output and usage; a cancelled invoke sends `abort`.
//
// The pi executable is $FABRIC_PI_BIN when set, else `pi` on PATH.
//
// Upstream NeMo Fabric's own Pi adapter (nvidia.fabric.pi, npm
// nemo-fabric-adapters-pi) embeds the Pi SDK in a Node host instead; this
// adapter has its own id so that both can be installed side by side.
//
// The package must never write a model key to disk, put it on a command
// line or log it: models.json names the key's environment variable
// ("$NAME") and the child reads the value from its environment. It must
// leave no process of the harness's group and no private directory behind
// after Stop.
package pi
