#!/usr/bin/env bash
# Runs Fabric's benchmarks and prints medians. Targets (DESIGN.md section 5):
# invoke overhead v2 <= 100 us and v1 <= 150 us, start to ready <= 6 ms,
# 1,000 idle runtimes with core RSS <= 100 MiB and <= 6 MiB per Go host.
set -euo pipefail
cd "$(dirname "$0")/.."
count=${COUNT:-5}
mkdir -p bin
CGO_ENABLED=0 go build -o bin/ ./cmd/fabric ./cmd/fabric-core  # static, as the CLIs are meant to be built
CGO_ENABLED=0 go build -o bin/fabric-host ./cmd/fabric-host  # static: see cmd/fabric-host
echo "== invoke overhead and start-to-ready, Go hosts run as bin/fabric-host (go test -bench, $count runs each)"
FABRIC_TEST_HOST=$PWD/bin/fabric-host go test -run '^$' -bench 'BenchmarkInvoke|BenchmarkStartToReady' -benchtime=${BENCHTIME:-2s} -count "$count" ./internal/runtime/ | tee /tmp/fabric-bench.txt
go run ./bench/median </tmp/fabric-bench.txt
echo "== wire protocol alone"
go test -run '^$' -bench 'BenchmarkV1RoundTrip|BenchmarkV2Call' -count 3 ./internal/wire/ | grep Benchmark
echo "== ${IDLE_N:-1000} idle runtimes"
go run ./bench/idle -n "${IDLE_N:-1000}" -host bin/fabric-host
