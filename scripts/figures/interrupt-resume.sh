#!/usr/bin/env bash
# Interrupt a real sweep at random moments, resume it each time, and check that every cell
# ends up in results.jsonl exactly once and that no worker outlives its coordinator.
#
#   scripts/figures/interrupt-resume.sh [PLAN] [INTERRUPTS] [SIGNAL]
#
# PLAN defaults to plans/tiny.toml, INTERRUPTS to 3, SIGNAL to INT (Ctrl-C); use KILL to
# simulate a crash of the coordinator. Needs a release build (cargo build --release).
set -euo pipefail
cd "$(dirname "$0")/../.."
plan="${1:-plans/tiny.toml}"
interrupts="${2:-3}"
signal="${3:-INT}"
bin="${CARGO_TARGET_DIR:-target}/release/bench"
[ -x "$bin" ] || { echo "build first: cargo build --release" >&2; exit 2; }
out="$(mktemp -d)/out"

for i in $(seq 1 "$interrupts"); do
  "$bin" run "$plan" --out "$out" --progress lines 2>>"$out.log" &
  pid=$!
  sleep "$(( (RANDOM % 15) + 3 ))"
  if kill -0 "$pid" 2>/dev/null; then
    echo "interrupt $i: SIG$signal to $pid"
    kill -s "$signal" "$pid" || true
  fi
  wait "$pid" || echo "  exit code $?"
  sleep 1
  if pgrep -f -- "--root $out/store/runs/" >/dev/null; then
    echo "FAIL: a worker outlived its coordinator" >&2; exit 1
  fi
done
"$bin" run "$plan" --out "$out" --progress lines 2>>"$out.log" || true
cells=$("$bin" plan "$plan" --out "$out" | grep -cE ' (cont|conc)_')
lines=$(wc -l < "$out/results.jsonl")
unique=$(grep -o '"bench_tag":"[^"]*"' "$out/results.jsonl" | sort -u | wc -l)
echo "cells in plan: $cells, lines in results.jsonl: $lines, distinct cells: $unique"
[ "$lines" -eq "$cells" ] && [ "$unique" -eq "$cells" ] || { echo "FAIL" >&2; exit 1; }
echo "OK: every cell recorded exactly once (log: $out.log)"
