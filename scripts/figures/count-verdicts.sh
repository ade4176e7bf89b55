#!/usr/bin/env bash
# Count verdicts beside a CPU neighbour: how often `bench ab` calls a planted request a
# change, and identical builds one, on this machine; then whether a time verdict's
# explanation names where the time went.
#
#   scripts/figures/count-verdicts.sh [PLANTED] [IDENTICAL] [ROWS]     (defaults: 10 20 1000)
#   (about 35 minutes: the two time verdicts take up to 2 minutes each)
#
# Beside a CPU neighbour (scripts/figures/neighbour.sh: one core busy 2.5 s of every 5):
# - one continuous cell of 50 commits at ROWS rows (inline index), one run a side
#   (`--no-extend`): PLANTED runs against a candidate that makes one HEAD more per
#   operation (BENCH_EXTRA_HEADS=1), IDENTICAL runs against the same build (a wrapper
#   setting BENCH_EXTRA_HEADS=0);
# - cells whose work depends on time or contention, 2 runs a side (`--no-extend`):
#   one writer for 4 s (a concurrent cell of concurrency 1) against a candidate 15 ms slower
#   a commit with the same requests (BENCH_OP_DELAY_MS=15), IDENTICAL runs; 4 writers for
#   2 s, and a cell of roles for 2 s (2 clients declaring tables, 1 listing them, on a flat
#   golden of ROWS rows), each PLANTED runs against the HEAD more and IDENTICAL runs
#   against the same build, and each IDENTICAL runs against the build 15 ms slower an
#   operation (whose writers interleave otherwise).
# Counted: the runs whose count verdict is a REGRESSION naming HEAD alone (the typical
# operation's, in the cell bounded by time; the commits' as far behind the others, for 4
# writers; in the cell of roles, a request more of each role's operation), and the runs with
# any count verdict (`same counts` is none; so is `no count verdict (…)`, listed).
# Then, without the neighbour, a candidate about 8 % slower with no request more
# (BENCH_OP_DELAY_MS: 8 % of the baseline's mean commit in a `bench ab` of identical builds,
# measured first) and one with a HEAD more as well, each run until its time verdict decides
# at ±5 %: their explanations.
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
wrapper slow15.sh BENCH_OP_DELAY_MS=15
printf 'name = "counts"\n[matrix]\nsizes = [%s]\ninline = [true]\n[continuous]\noperations = 50\n' \
  "$rows" >"$work/plan.toml"
printf 'name = "one"\n[matrix]\nsizes = [%s]\ninline = [true]\n[concurrent]\nconcurrency = [1]\nduration_secs = 4\n[run]\nrepetitions = 2\n' \
  "$rows" >"$work/one.toml"
printf 'name = "four"\n[matrix]\nsizes = [%s]\ninline = [true]\n[concurrent]\nconcurrency = [4]\nduration_secs = 2\n[run]\nrepetitions = 2\n' \
  "$rows" >"$work/four.toml"
printf '%s\n' 'name = "roles"' '[matrix]' "sizes = [$rows]" 'inline = [false]' \
  '[workload]' 'duration_secs = 2' '[[roles]]' 'name = "writers"' 'clients = 2' \
  '[roles.mix]' '"write-declare-table" = 1' '[[roles]]' 'name = "readers"' 'clients = 1' \
  '[roles.mix]' '"warm-read-list-tables" = 1' '[run]' 'repetitions = 2' >"$work/roles.toml"
# The goldens once, before the timed runs.
for p in plan one four roles; do
  "$bench" run "$work/$p.toml" --out "$work/warm-$p" --root "$work/store" --progress lines >/dev/null 2>&1
done

# ab PLAN CANDIDATE N: the count verdict of each of N runs, one a line.
ab() {
  local plan="$1" cand="$2" n="$3"
  for i in $(seq 1 "$n"); do
    rm -rf "$work/out"
    "$bench" ab "$work/$plan.toml" --candidate "$work/$cand" --out "$work/out" --root "$work/store" \
      --progress lines --no-extend 2>/dev/null \
      | awk '/^counts per successful operation/ { t = 1; next } t && /^(cont|conc|roles)_/ { n = split($0, f, /   */); print f[n]; exit }'
  done
}

# tally NAME FILE N PATTERN: how many of N runs' verdicts match PATTERN (a planted request
# found), or with PATTERN empty how many have any count verdict (identical builds).
tally() {
  local name="$1" file="$2" n="$3" pattern="$4" k
  if [ -n "$pattern" ]; then
    k=$(grep -c "$pattern" "$file" || true)
    echo "$name: the planted request found in $k of $n runs"
  else
    k=$(grep -Evc '^(same counts|no count verdict)' "$file" || true)
    echo "$name: a count verdict in $k of $n runs"
  fi
  # Each verdict once with its count (what it costs, which differs run to run, left out).
  sed -e 's/^/  /' -e 's/; cost: .*//' "$file" | sort | uniq -c
}

"$here/neighbour.sh" & neighbour=$!
echo "== continuous, 50 commits, one run a side, beside a CPU neighbour =="
ab plan head.sh "$planted_n" >"$work/planted.txt"
ab plan same.sh "$identical_n" >"$work/identical.txt"
tally "planted (a HEAD more)" "$work/planted.txt" "$planted_n" '^REGRESSION (B: +1.0 HEAD per op'
tally "identical" "$work/identical.txt" "$identical_n" ""
echo
echo "== bounded by time or contended, 2 runs a side, beside a CPU neighbour =="
ab one slow15.sh "$identical_n" >"$work/one.txt"
tally "one writer, 4 s, B 15 ms slower a commit, the same requests" "$work/one.txt" "$identical_n" ""
ab four head.sh "$planted_n" >"$work/four-planted.txt"
ab four same.sh "$identical_n" >"$work/four-identical.txt"
ab four slow15.sh "$identical_n" >"$work/four-slow.txt"
tally "4 writers, 2 s, planted (a HEAD more)" "$work/four-planted.txt" "$planted_n" \
  '^REGRESSION (B: +1.0 HEAD (median op [^)]*behind[^)]*) per op, [0-9.]* → [0-9.]*)\(; cost: .*\)\?$'
tally "4 writers, 2 s, identical" "$work/four-identical.txt" "$identical_n" ""
tally "4 writers, 2 s, B 15 ms slower a commit, the same requests" "$work/four-slow.txt" "$identical_n" ""
ab roles head.sh "$planted_n" >"$work/roles-planted.txt"
ab roles same.sh "$identical_n" >"$work/roles-identical.txt"
ab roles slow15.sh "$identical_n" >"$work/roles-slow.txt"
kill "$neighbour"; neighbour=""
tally "roles, 2 s, planted (a HEAD more)" "$work/roles-planted.txt" "$planted_n" \
  '^REGRESSION (B: +1.0 requests (median op [^)]*behind[^)]*) of writers/write-declare-table per op.*+1.0 requests (median op) of readers/warm-read-list-tables per op'
tally "roles, 2 s, identical" "$work/roles-identical.txt" "$identical_n" ""
tally "roles, 2 s, B 15 ms slower an operation, the same requests" "$work/roles-slow.txt" "$identical_n" ""

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
