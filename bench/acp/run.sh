#!/usr/bin/env bash
# Fabric's ACP adapter vs sandbox-agent, both driving the same native
# codex-acp against the same modelstub. Needs harnesses/install.sh first.
# Knobs: TURNS, STARTS, CYCLES (default 100), IDLE (e.g. 5s).
set -euo pipefail
cd "$(dirname "$0")/../.."
h=$PWD/harnesses
mkdir -p bin
go build -o bin/fabric ./cmd/fabric
go run ./bench/acp -fabric bin/fabric \
  -codex-acp "$h/acp/node_modules/@zed-industries/codex-acp-linux-x64/bin/codex-acp" \
  -codex "$h/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex" \
  -sandbox-agent "$h/acp/node_modules/@sandbox-agent/cli-linux-x64/bin/sandbox-agent" \
  -turns "${TURNS:-20}" -starts "${STARTS:-10}" -cycles "${CYCLES:-100}" -idle "${IDLE:-5s}"
