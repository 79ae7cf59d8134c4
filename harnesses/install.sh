#!/usr/bin/env bash
# Installs the pinned npm packages Fabric is tested against, reproducibly
# from package-lock.json. Safe to run repeatedly: it does nothing when
# node_modules already matches the lockfile.
set -euo pipefail
cd "$(dirname "$0")"
stamp=node_modules/.fabric-lock.sha256
want=$(sha256sum package-lock.json | cut -d' ' -f1)
if [[ -f $stamp && $(cat "$stamp") == "$want" ]]; then
  exit 0
fi
npm ci --no-audit --no-fund --loglevel=error
echo "$want" > "$stamp"
