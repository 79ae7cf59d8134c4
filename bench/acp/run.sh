#!/usr/bin/env bash
# Fabric's ACP adapter vs sandbox-agent, both driving the same native
# codex-acp against the same modelstub, and codex-acp driven directly over
# stdio. Needs harnesses/install.sh first; without sandbox-agent installed
# it measures Fabric against direct only.
# Fabric is hosted by bin/fabric-host, built static as bench/run.sh does
# (the host Fabric uses when fabric-host sits beside the program).
# Knobs: TURNS, STARTS, CYCLES (default 100), IDLE (e.g. 5s), SEEDS=off (the ACP adapter's home seeds, on by default).
set -euo pipefail
cd "$(dirname "$0")/../.."
h=${HARNESSES:-$PWD/harnesses} # HARNESSES: an installed harnesses/ elsewhere (a worktree has none)
mkdir -p bin
CGO_ENABLED=0 go build -o bin/fabric-host ./cmd/fabric-host
sa="$h/acp/node_modules/@sandbox-agent/cli-linux-x64/bin/sandbox-agent"
[ -x "$sa" ] || sa=""
go run ./bench/acp -host bin/fabric-host \
  -codex-acp "$h/acp/node_modules/@zed-industries/codex-acp-linux-x64/bin/codex-acp" \
  -codex "$h/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex" \
  -sandbox-agent "$sa" \
  -turns "${TURNS:-20}" -starts "${STARTS:-10}" -cycles "${CYCLES:-100}" -idle "${IDLE:-5s}" -seeds="${SEEDS:-default}"
