#!/usr/bin/env bash
# Stop the cluster scripts/rgw-up.sh started in DIR: its gateway, OSD and monitor, by the
# pids in DIR/run (never by name), with SIGKILL (its data lives in memory and goes with it,
# so nothing is lost by not asking; asked with SIGTERM, the gateway takes seconds, and over
# 10 s once the monitor is stopping too), waiting up to 10 s for each to be gone; then
# remove DIR (with --keep-logs, leave DIR/log).
#
#   scripts/rgw-down.sh [DIR] [--keep-logs]   (default: $BENCH_RGW_DIR or /tmp/bench-rgw)
set -uo pipefail
DIR="${1:-${BENCH_RGW_DIR:-/tmp/bench-rgw}}"
[ -d "$DIR" ] || exit 0
# The owner's watchdog first (unless it is what runs this), so it does not stop a cluster
# started anew in this folder.
w="$DIR/run/watchdog.pid"
if [ -s "$w" ] && [ "$(cat "$w")" != "$PPID" ] && [ "$(cat "$w")" != "$$" ]; then
  kill -TERM "$(cat "$w")" 2>/dev/null
fi
pids=()
for name in client.rgw.a osd.0 mon.a; do
  f="$DIR/run/$name.pid"
  [ -s "$f" ] || continue
  p=$(cat "$f")
  kill -KILL "$p" 2>/dev/null && pids+=("$p")
done
alive=()
for _ in $(seq 50); do
  alive=()
  for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && alive+=("$p"); done
  [ ${#alive[@]} -eq 0 ] && break
  sleep 0.2
done
for p in "${alive[@]}"; do
  echo "rgw-down: $p is still there 10 s after SIGKILL" >&2
done
# Its ports are free again: out of the registry rgw-up.sh keeps.
REG="${BENCH_RGW_REGISTRY:-/tmp/bench-rgw-ports}"
if [ -f "$REG" ]; then
  (
    flock 9
    grep -v "^$DIR " "$REG" > "$REG.new" 2>/dev/null
    mv -f "$REG.new" "$REG"
  ) 9>>"$REG.lock"
fi
if [ "${2:-}" = --keep-logs ]; then
  find "$DIR" -mindepth 1 -maxdepth 1 ! -name log -exec rm -rf {} +
else
  rm -rf "$DIR"
fi
