#!/usr/bin/env bash
# Stop the SeaweedFS that scripts/seaweed-up.sh started in DIR, by the pid in DIR/run (never
# by name): SIGTERM, then SIGKILL after 10 s; then remove DIR (with --keep-logs, leave
# DIR/log).
#
#   scripts/seaweed-down.sh [DIR] [--keep-logs]   (default: $BENCH_SEAWEED_DIR or /tmp/bench-seaweed)
set -uo pipefail
DIR="${1:-${BENCH_SEAWEED_DIR:-/tmp/bench-seaweed}}"
[ -d "$DIR" ] || exit 0
w="$DIR/run/watchdog.pid"
if [ -s "$w" ] && [ "$(cat "$w")" != "$PPID" ] && [ "$(cat "$w")" != "$$" ]; then
  kill -TERM "$(cat "$w")" 2>/dev/null
fi
f="$DIR/run/weed.pid"
if [ -s "$f" ]; then
  p=$(cat "$f")
  kill -TERM "$p" 2>/dev/null
  for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.2; done
  kill -KILL "$p" 2>/dev/null
  for _ in $(seq 25); do kill -0 "$p" 2>/dev/null || break; sleep 0.2; done
fi
if [ "${2:-}" = --keep-logs ]; then
  find "$DIR" -mindepth 1 -maxdepth 1 ! -name log -exec rm -rf {} +
else
  rm -rf "$DIR"
fi
