#!/usr/bin/env bash
# 500 scripted trials (50 tasks x 10 repeats) at concurrency 16 through the
# built fabric: wall time, time per trial, the runner's peak RSS, its open
# fds and threads sampled during the run (bounded: they must not grow with
# the trials done), and processes left after it. Then the per-trial overhead
# over a bare run (go test -bench BenchmarkTrial, medians).
set -euo pipefail
cd "$(dirname "$0")/../.."
n_tasks=${TASKS:-50}; repeats=${REPEATS:-10}; conc=${CONCURRENCY:-16}
mkdir -p bin
go build -o bin/ ./cmd/fabric ./cmd/fabric-core  # fabric runs its commands in fabric-core
go build -o bin/fabric-host ./cmd/fabric-host
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat >"$work/agent.yaml" <<'YAML'
schema_version: fabric.agent/v1alpha1
metadata: {name: bench}
runtime: {timeout_seconds: 60}
harness:
  adapter_id: fabric.scripted
  settings: {response: "answer to {input}", delay_ms: 50}
YAML
{
  echo "schema_version: fabric.batch/v1alpha1"
  echo "metadata: {name: scale}"
  echo "repeats: $repeats"
  echo "tasks:"
  echo "  items:"
  for i in $(seq -w 1 "$n_tasks"); do echo "    - {id: t$i, input: {text: \"task $i\"}}"; done
  echo "configs: [{id: a, config: agent.yaml}]"
  echo "grader: {kind: output_match, match: {contains: task}}"
  echo "limits: {concurrency: $conc}"
} >"$work/batch.yaml"
total=$((n_tasks * repeats))
start=$(date +%s.%N)
TMPDIR=$work bin/fabric batch run "$work/batch.yaml" --dir "$work/run" -o json >"$work/summary.json" 2>"$work/progress.log" &
pid=$!
samples="$work/samples"
: >"$samples"
while kill -0 "$pid" 2>/dev/null; do
  done_n=$( (wc -l <"$work/run/results.jsonl") 2>/dev/null || echo 0)
  fds=$(ls /proc/$pid/fd 2>/dev/null | wc -l || true)
  thr=$(awk '/^Threads/{print $2}' /proc/$pid/status 2>/dev/null || true)
  rss=$(awk '/^VmHWM/{print $2}' /proc/$pid/status 2>/dev/null || true)
  [[ -n $thr ]] && echo "$done_n $fds $thr $rss" >>"$samples"
  sleep 0.5
done
wait "$pid" || { echo "batch run failed"; tail "$work/progress.log"; exit 1; }
end=$(date +%s.%N)
passed=$(grep -o '"n_passed": [0-9]*' "$work/summary.json" | head -1 | awk '{print $2}')
awk -v s="$start" -v e="$end" -v n="$total" -v p="$passed" 'BEGIN{printf "trials %d passed %d wall %.1f s, %.1f ms per trial (concurrency '"$conc"')\n", n, p, e-s, 1000*(e-s)/n}'
awk 'NR==1{f1=$2;t1=$3} {f=$2;t=$3;if($4>r)r=$4; if($2>fm)fm=$2; if($3>tm)tm=$3} END{printf "runner: peak RSS %.1f MiB; fds first %d last %d max %d; threads first %d last %d max %d (%d samples)\n", r/1024, f1, f, fm, t1, t, tm, NR}' "$samples"
left=$(pgrep -f -- "$work" | wc -l || true)
echo "processes left mentioning the batch dir: $left"
echo "== per-trial overhead over a bare Client.Run (BenchmarkTrialOverhead, ${COUNT:-5} runs)"
FABRIC_TEST_HOST=$PWD/bin/fabric-host go test -run '^$' -bench BenchmarkTrialOverhead -count "${COUNT:-5}" ./batch/ | tee "$work/bench.txt" | grep Benchmark
go run ./bench/median <"$work/bench.txt"
