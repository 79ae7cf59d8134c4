#!/usr/bin/env bash
# 10,000 start/invoke/stop cycles (alternating protocol v1 and v2): no
# process, file descriptor, goroutine or runtime home may be left behind.
set -euo pipefail
cd "$(dirname "$0")/.."
FABRIC_LEAK_CYCLES=${CYCLES:-10000} go test -count=1 -timeout 60m -run TestNoLeaksAcrossCycles -v ./internal/runtime/ | grep -E 'cycles in|PASS|FAIL|ok'
