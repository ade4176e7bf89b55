#!/usr/bin/env bash
# Histories at scale: a run of plans/soak.toml (one writer declaring tables at 20 a second,
# two readers listing and one looking up at 20 a second each, a cleanup every 10 s) for
# MINUTES on local disk, whose history the run writes; then, on that history:
# - each step timed REPS times in one process (crates/bench-core/examples/history_scale.rs):
#   reading it back, writing it again, judging it as `bench check` does, exporting it for
#   Elle (median and range), the file's size per 1,000 operations and the process's peak RSS;
# - `bench check --json` and `bench check --export elle`, and adya on the export
#   (`adya check -m list-append -c strict-serializable`), each REPS times as commands: wall
#   time (median and range) and peak RSS (/usr/bin/time), their exit statuses;
# - whether `bench check`'s findings equal the record's (`consistency` and `outcomes`).
#
#   scripts/figures/history-scale.sh [MINUTES] [REPS]     (defaults: 10 3; about 13 minutes)
#   HISTORY=DIR scripts/figures/history-scale.sh          (a history already kept: no run)
set -euo pipefail
cd "$(dirname "$0")/../.."
MINUTES=${1:-10}
REPS=${2:-3}
target="${CARGO_TARGET_DIR:-target}"
cargo build --quiet --release --bin bench
cargo build --quiet --release -p bench-core --example history_scale
bench="$target/release/bench"
command -v adya >/dev/null || PATH="${BENCH_TEST_HOME:-$HOME/.cache/bench-test}/adya/bin:$PATH"
command -v adya >/dev/null || { echo "adya not found: cargo install adya --version 0.1.0 --no-default-features" >&2; exit 1; }
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
if [ -n "${HISTORY:-}" ]; then
  folder="$HISTORY"
  results="$(dirname "$(dirname "$folder")")/results.jsonl"
else
  "$bench" run plans/soak.toml --out "$WORK/out" --root "$WORK/store" --progress lines \
    --set "workload.duration_secs=$((MINUTES * 60))" \
    --set "run.cell_timeout_secs=$((MINUTES * 60 + 600))" 2>"$WORK/run.log" \
    || { tail -20 "$WORK/run.log" >&2; exit 1; }
  results="$WORK/out/results.jsonl"
  folder="$WORK/out/$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["history"])' "$results")"
fi
echo "history: $folder"
echo "in one process, $REPS repetitions (ms: median, min, max):"
"$target/release/examples/history_scale" "$folder" "$REPS" | sed 's/^/  /' | tee "$WORK/steps"
python3 - "$WORK/steps" <<'PY'
import sys
kv = dict(l.split(None, 1) for l in open(sys.argv[1]))
ops, size = int(kv["operations"]), int(kv["bytes"])
print("  per 1,000 operations: %.0f KiB of history.jsonl" % (size / ops * 1000 / 1024))
PY
stat() { python3 -c 'import statistics,sys; x=[float(a) for a in sys.argv[1:]]; print("%.2f %.2f %.2f" % (statistics.median(x), min(x), max(x)))' "$@"; }
measure() {  # NAME CMD...: wall s and peak RSS of REPS runs
  local name=$1; shift
  local walls=() rss=0 code=0
  for _ in $(seq "$REPS"); do
    set +e
    /usr/bin/time -f '%e %M' -o "$WORK/time" "$@" >"$WORK/$name.out" 2>"$WORK/$name.err"
    code=$?
    set -e
    read -r w m < "$WORK/time"
    walls+=("$w"); [ "$m" -gt "$rss" ] && rss=$m
  done
  printf '  %-28s wall s %-20s peak RSS %6.1f MiB  exit %s\n' "$name" "$(stat "${walls[@]}")" \
    "$(echo "$rss / 1024" | bc -l)" "$code"
}
echo "as commands, $REPS runs each (wall s: median, min, max):"
measure "bench check --json" "$bench" check "$folder" --json
cp "$WORK/bench check --json.out" "$WORK/check.json"
measure "bench check --export elle" "$bench" check "$folder" --export elle
measure "adya check (list-append)" adya check -m list-append -c strict-serializable "$folder/elle.json"
python3 - "$results" "$WORK/check.json" <<'PY'
import json, sys
record = json.loads(open(sys.argv[1]).readline())
found = json.load(open(sys.argv[2]))[0]
for k in ("consistency", "outcomes"):
    print("  bench check's %-12s equals the record's: %s" % (k, found.get(k) == record.get(k)))
PY
