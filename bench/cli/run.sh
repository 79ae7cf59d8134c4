#!/usr/bin/env bash
# Measures the CPU time (user+sys) of whole CLI processes that need no schema, as a ratio to /bin/true and to a
# Go hello world (issue 15 budget: at most 4x /bin/true). Each timed run execs one command RUNS times; the
# commands are timed in pairs against /bin/true, alternated, PAIRS times, and the medians are printed.
#
#   bench/cli/run.sh                   builds cmd/fabric (with cmd/fabric-core, which runs its commands, and
#                                      cmd/fabric-serve) and cmd/fabric-agent-ctl (with cmd/fabric-agent-ctl-serve)
#                                      from this checkout, as they are meant to be built (CGO_ENABLED=0, see
#                                      cmd/fabric-agent-ctl)
#   BASE="dir..." bench/cli/run.sh     also measures the binaries in each dir (e.g. main's), in the same run,
#                                      tagged with the dir's name
#
# RUNS (default 50) and PAIRS (default 9) set the sizes.
set -euo pipefail
cd "$(dirname "$0")/../.."
runs=${RUNS:-50}
pairs=${PAIRS:-9}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
mkdir "$out/new"
CGO_ENABLED=0 go build -o "$out/new/" ./cmd/fabric ./cmd/fabric-core ./cmd/fabric-serve ./cmd/fabric-agent-ctl ./cmd/fabric-agent-ctl-serve
go build -o "$out/hello" ./bench/cli/hello

# cpu_us CMD...: prints the children's user+sys CPU in microseconds for RUNS runs of CMD.
cpu_us() {
	local i
	(
		for ((i = 0; i < runs; i++)); do "$@" >/dev/null 2>&1 || true; done
		# `times` prints the shell's own line, then its children's ("0m0.123s 0m0.045s"); it must run in
		# this shell (not in a pipeline's subshell) to see them.
		times >"$out/times"
	)
	awk 'NR==2 { u=$1; s=$2; sub(/s$/,"",u); sub(/s$/,"",s); split(u,a,"m"); split(s,b,"m");
		printf "%d\n", ((a[1]*60+a[2]) + (b[1]*60+b[2])) * 1e6 }' "$out/times"
}

# The commands: each needs no schema. `check` is pointed at a socket where nothing listens.
declare -a names cmds
add() { names+=("$1"); cmds+=("$2"); }
add hello "$out/hello"
# shellcheck disable=SC2086 # BASE is a list of dirs
for dir in ${BASE:-} "$out/new"; do
	tag=$(basename "$dir")
	add "$tag fabric-agent-ctl --help" "$dir/fabric-agent-ctl --help"
	add "$tag fabric-agent-ctl check" "$dir/fabric-agent-ctl check --socket $out/nothing.sock"
	add "$tag fabric --help" "$dir/fabric --help"
	add "$tag fabric run --help" "$dir/fabric run --help"
	# Not in the budget: a command that runs (fabric hands it to fabric-core, one exec more; the document is
	# missing), to show what that exec costs.
	add "$tag fabric deploy status (runs)" "$dir/fabric deploy status $out/missing.yaml"
done

for ((p = 0; p < pairs; p++)); do
	for ((c = 0; c < ${#cmds[@]}; c++)); do
		# shellcheck disable=SC2086 # the command lines are split on purpose
		t=$(cpu_us /bin/true)
		x=$(cpu_us ${cmds[c]})
		echo "$c $t $x" >>"$out/samples"
	done
done

printf '%-34s %12s %12s %8s\n' command "us/process" "true us" "x true"
for ((c = 0; c < ${#cmds[@]}; c++)); do
	awk -v c="$c" -v runs="$runs" -v name="${names[c]}" '
		$1 == c { t[n] = $2; x[n] = $3; r[n] = $3 / $2; n++ }
		function med(v, n,   i, j, tmp) {
			for (i = 0; i < n; i++) for (j = i + 1; j < n; j++) if (v[j] < v[i]) { tmp = v[i]; v[i] = v[j]; v[j] = tmp }
			return n % 2 ? v[int(n/2)] : (v[n/2-1] + v[n/2]) / 2
		}
		END { printf "%-34s %12.0f %12.0f %8.2f\n", name, med(x, n) / runs, med(t, n) / runs, med(r, n) }
	' "$out/samples"
done
