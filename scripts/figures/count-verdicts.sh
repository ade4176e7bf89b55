#!/usr/bin/env bash
# Count verdicts beside a CPU neighbour: how often `bench ab` with one run a side calls a
# planted request a change, and identical builds one, on this machine; then whether a time
# verdict's explanation names where the time went.
#
#   scripts/figures/count-verdicts.sh [PLANTED] [IDENTICAL] [ROWS]     (defaults: 10 20 1000)
#   (about 10 minutes: the two time verdicts take up to 2 minutes each)
#
# Each `bench ab` runs one continuous cell of 50 commits at ROWS rows (inline index) once a
# side (`--no-extend`), beside a CPU neighbour (scripts/figures/neighbour.sh: one core busy
# 2.5 s of every 5):
#   PLANTED runs   the candidate makes one HEAD more per commit (BENCH_EXTRA_HEADS=1);
#   IDENTICAL runs the candidate is the same build (a wrapper setting BENCH_EXTRA_HEADS=0).
# Counted: the runs whose count verdict is a REGRESSION naming HEAD, and the runs with any
# count verdict. Then, without the neighbour, a candidate about 8 % slower with no request
# more (BENCH_OP_DELAY_MS: 8 % of the baseline's mean commit in a `bench ab` of identical
# builds, measured first) and one with a HEAD more as well, each run until its time verdict
# decides at ±5 %: their explanations.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
planted_n="${1:-10}"; identical_n="${2:-20}"; rows="${3:-1000}"
target="${CARGO_TARGET_DIR:-$repo/target}"
(cd "$repo" && cargo build --release --quiet --bin bench)
bench="$target/release/bench"
work="$(mktemp -d)"
neighbour=""
trap '[ -n "$neighbour" ] && kill "$neighbour" 2>/dev/null; rm -rf "$work"' EXIT
wrapper() { printf '#!/bin/sh\n%s exec %s "$@"\n' "$2" "$bench" >"$work/$1"; chmod +x "$work/$1"; }
wrapper head.sh BENCH_EXTRA_HEADS=1
wrapper same.sh BENCH_EXTRA_HEADS=0
printf 'name = "counts"\n[matrix]\nsizes = [%s]\ninline = [true]\n[continuous]\noperations = 50\n' \
  "$rows" >"$work/plan.toml"
# The golden once, before the timed runs.
"$bench" run "$work/plan.toml" --out "$work/warm" --root "$work/store" --progress lines >/dev/null 2>&1

# ab CANDIDATE N [ARGS...]: the count verdict of each of N runs, one a line.
ab() {
  local cand="$1" n="$2"; shift 2
  for i in $(seq 1 "$n"); do
    rm -rf "$work/out"
    "$bench" ab "$work/plan.toml" --candidate "$work/$cand" --out "$work/out" --root "$work/store" \
      --progress lines --no-extend "$@" 2>/dev/null \
      | awk '/^exact counts/ { t = 1; next } t && /^cont_/ { n = split($0, f, /   */); print f[n]; exit }'
  done
}

"$here/neighbour.sh" & neighbour=$!
echo "== one run a side, beside a CPU neighbour: $planted_n planted (a HEAD more), $identical_n identical =="
ab head.sh "$planted_n" >"$work/planted.txt"
ab same.sh "$identical_n" >"$work/identical.txt"
kill "$neighbour"; neighbour=""
named=$(grep -c '^REGRESSION (B: +1.0 HEAD per op' "$work/planted.txt" || true)
false_verdicts=$(grep -vc '^same counts' "$work/identical.txt" || true)
echo "planted:   count verdict naming HEAD in $named of $planted_n runs"
sed 's/^/  /' "$work/planted.txt" | sort | uniq -c
echo "identical: a count verdict in $false_verdicts of $identical_n runs"
sed 's/^/  /' "$work/identical.txt" | sort | uniq -c

echo
echo "== time verdicts and what explains them (no neighbour; each until decided at ±5 %) =="
# 8 % of the baseline's mean commit as `bench ab` runs it (in lockstep with the other arm),
# from one run of identical builds.
rm -rf "$work/out"
"$bench" ab "$work/plan.toml" --candidate "$work/same.sh" --out "$work/out" --root "$work/store" \
  --progress lines --no-extend >/dev/null 2>&1
mean=$(python3 -c 'import json,sys
print(round(next(r for r in map(json.loads, open(sys.argv[1])) if r["arm"] == "A")["avg_latency_ms"], 3))' \
  "$work/out/results.jsonl")
delay=$(python3 -c "print(round($mean * 0.08, 3))")
wrapper slow.sh "BENCH_OP_DELAY_MS=$delay"
wrapper slowhead.sh "BENCH_OP_DELAY_MS=$delay BENCH_EXTRA_HEADS=1"
for cand in slow.sh slowhead.sh; do
  rm -rf "$work/out"
  echo "-- candidate: $(sed -n 2p "$work/$cand" | sed 's/ exec .*//') (baseline mean commit $mean ms)"
  "$bench" ab "$work/plan.toml" --candidate "$work/$cand" --out "$work/out" --root "$work/store" \
    --progress lines --threshold 5 --budget-secs 120 2>/dev/null \
    | awk '/^cont_[^ ]+  / { k = split($0, f, /   */); print (++n == 1 ? "  time:  " : "  count: ") f[k] }'
done
