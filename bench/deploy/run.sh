#!/usr/bin/env bash
# fabric deploy vs fabric-agent-ctl serve driving the same scripted runtimes
# (DESIGN.md section 5; issue 11 acceptance 8), medians over RUNS (default 5):
#  1. unchanged apply of 10 agents (<= 200 ms) vs status + 10 check --ready
#  2. apply of 100 agents from empty (<= 10 s) vs serve + 100 start
#  3. supervisor idle CPU over IDLE (default 10s) with 100 idle agents (0 ticks),
#     then over STEADY (default 5s) right after it
#  4. supervisor RSS with 100 idle agents (<= 30 MiB) plus the hosts
# then the Go benchmarks of 1 and 2 (BENCH=0 skips them).
# Knobs: RUNS, IDLE, STEADY, PARALLEL (fabric-agent-ctl start calls at once, default 8).
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p bin
go build -o bin/ ./cmd/fabric ./cmd/fabric-core ./cmd/fabric-serve ./cmd/fabric-host ./cmd/fabric-agent-ctl ./cmd/fabric-agent-ctl-serve
go run ./bench/deploy -bin bin -runs "${RUNS:-5}" -idle "${IDLE:-10s}" -parallel "${PARALLEL:-8}" -steady "${STEADY:-5s}"
if [ "${BENCH:-1}" != 0 ]; then
  echo "== go test -bench (${RUNS:-5} runs each)"
  go test -run '^$' -bench 'BenchmarkApplyUnchanged10|BenchmarkApplyFromEmpty100' -benchtime "${BENCHTIME:-1x}" -count "${RUNS:-5}" ./internal/deploy/ | tee /tmp/fabric-deploy-bench.txt
  go run ./bench/median </tmp/fabric-deploy-bench.txt
fi
