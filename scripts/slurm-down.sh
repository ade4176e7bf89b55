#!/usr/bin/env bash
# Stop the Slurm cluster scripts/slurm-up.sh started in DIR, by the daemons' pid files
# (never by name, so nothing else on the machine is touched).
#
#   scripts/slurm-down.sh [DIR]      (default: $BENCH_SLURM_DIR or /tmp/bench-slurm)
set -uo pipefail
DIR="${1:-${BENCH_SLURM_DIR:-/tmp/bench-slurm}}"
[ -d "$DIR" ] || exit 0
pids=()
for f in "$DIR"/slurmd-*.pid "$DIR/slurmctld.pid" "$DIR/munged.pid" "$DIR/watchdog.pid"; do
  [ -f "$f" ] || continue
  pid=$(cat "$f")
  # The owner's watchdog runs this script when its owner is gone: not itself.
  if [ "$pid" != "$$" ] && kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null && pids+=("$pid")
  fi
  rm -f "$f"
done
# Wait for them to go (SIGKILL after 10 s).
for _ in $(seq 1 50); do
  left=0
  for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && left=1; done
  [ "$left" -eq 0 ] && exit 0
  sleep 0.2
done
for pid in "${pids[@]}"; do kill -KILL "$pid" 2>/dev/null; done
exit 0
