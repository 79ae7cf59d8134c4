#!/usr/bin/env bash
# Access gateway benchmarks (issue 12 acceptance 6), medians of COUNT runs
# on GOMAXPROCS=2 (internal/access/bench_test.go says what each measures):
#   added time to the first text event, gateway vs direct Invoke  <= 2 ms
#   RSS added by 200 idle streams                                  <= 50 MiB
#   authenticated GET /v1/fabric/access                            >= 1,000 req/s
# Medians by benchstat when the module proxy serves it (BENCHSTAT=0 skips
# it), and always by bench/median, from which the budget lines are read.
set -euo pipefail
cd "$(dirname "$0")/../.."
count=${COUNT:-5}
raw=$(mktemp)
trap 'rm -f "$raw" "$raw.med"' EXIT
pkg=./internal/access/
bench() { go test -run '^$' -cpu 2 -count "$count" "$@" "$pkg" | tee -a "$raw" | grep '^Benchmark'; }
echo "== $count runs each (go test -bench, -cpu 2)"
bench -bench '^BenchmarkTurnFirstByte$' -benchtime "${TURNS:-200}x"
bench -bench '^BenchmarkIdleStreams200$' -benchtime "${ROUNDS:-5}x"
bench -bench '^BenchmarkAccessStatus$' -benchtime "${BENCHTIME:-1s}"
if [ "${BENCHSTAT:-1}" != 0 ] && timeout 180 go run golang.org/x/perf/cmd/benchstat@latest "$raw" >"$raw.med" 2>/dev/null; then
	echo "== benchstat (center = median)"
	cat "$raw.med"
fi
echo "== medians"
go run ./bench/median <"$raw" | tee "$raw.med"
metric() { grep -E "median $1-[0-9]+ " "$raw.med" | tr ' ' '\n' | sed -n "s|^$2=||p"; }
verdict() { awk -v v="$1" -v b="$3" -v op="$2" 'BEGIN { ok = (op == "<=") ? v <= b : v >= b; print (ok ? "met" : "MISSED") }'; }
added=$(metric BenchmarkTurnFirstByte added-ms)
resume=$(metric BenchmarkIdleStreams200/resume MiB)
turns=$(metric BenchmarkIdleStreams200/turns MiB)
lifted=$(metric BenchmarkAccessStatus/lifted ok/s)
worst=$(awk -v a="$resume" -v b="$turns" 'BEGIN { print (a > b) ? a : b }')
echo "== budgets"
printf 'added latency to first text event  %8s ms     (direct %s ms, gateway %s ms)  budget <= 2 ms      %s\n' \
	"$added" "$(metric BenchmarkTurnFirstByte direct-ms)" "$(metric BenchmarkTurnFirstByte gateway-ms)" "$(verdict "$added" '<=' 2)"
printf '200 idle streams, added RSS         %8s MiB    (resume %s, own turns %s)          budget <= 50 MiB    %s\n' \
	"$worst" "$resume" "$turns" "$(verdict "$worst" '<=' 50)"
printf 'GET /v1/fabric/access, limits lifted %7s req/s  (default limits: 1 key %s ok/s, 24 keys on 8 addresses %s ok/s)  budget >= 1000/s  %s\n' \
	"$lifted" "$(metric BenchmarkAccessStatus/default-limits ok/s)" "$(metric BenchmarkAccessStatus/default-limits-24keys-8addrs ok/s)" "$(verdict "$lifted" '>=' 1000)"
