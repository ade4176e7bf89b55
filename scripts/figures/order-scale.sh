#!/usr/bin/env bash
# How the consistency checker scales, on two synthetic histories of 100,000 and 1,000,000
# operations side by side (crates/bench-core/examples/order_scale.rs), each checked REPS
# times in a fresh process:
# - plain: 8 writers creating tables in one namespace, 8 readers listing and looking up, one
#   operation after another, every read showing exactly its version;
# - run: shaped like a freshness run (crates/bench-core/src/consistency/synthetic.rs): 8
#   writers and 8 readers whose operations take COMMIT_MS and READ_MS on average, with
#   PAUSE_MS between a writer's operations and READ_PAUSE_MS between a reader's (defaults: a
#   freshness run's on a 2-core VM, local disk: commits of 20 ms at 20 a second, reads of
#   2.2 ms back to back), overlapping; commits landing within their
#   operations, reads serving the version of a moment within theirs; listings in pages of 50
#   and look-ups, removals, 1 % of versions unknown; a new namespace every 10 s of the
#   history (one freshness cell after another).
# Prints per shape and size the median and range of the time of the checks on the
# `__manifest` version order and of the per-entry checks (stale reads, lag, monotonic reads,
# phantoms), the peak resident memory of the process (history included), what they found
# (0), and the ratio of the medians 1,000,000 / 100,000 (10 where a check is linear). Then,
# at 10,000 and 30,000 operations of the plain shape, the per-entry checks beside the same
# checks holding every read against every commit it observes (reads x commits), in one
# process, once each: their times and the ratio.
#
#   scripts/figures/order-scale.sh [REPS]      (default 3)
#   COMMIT_MS=20 READ_MS=2.2 PAUSE_MS=30 READ_PAUSE_MS=0.1 scripts/figures/order-scale.sh 3
set -euo pipefail
cd "$(dirname "$0")/../.."
reps="${1:-3}"
COMMIT_MS=${COMMIT_MS:-20} READ_MS=${READ_MS:-2.2} PAUSE_MS=${PAUSE_MS:-30} READ_PAUSE_MS=${READ_PAUSE_MS:-0.1}
target="${CARGO_TARGET_DIR:-target}"
cargo build --quiet --release -p bench-core --example order_scale
bin="$target/release/examples/order_scale"
stat() { python3 -c 'import statistics,sys; x=[float(a) for a in sys.argv[1:]]; print("%g %g %g" % (statistics.median(x), min(x), max(x)))' "$@"; }
echo "run shape: commits ${COMMIT_MS} ms with ${PAUSE_MS} ms between a writer's, reads ${READ_MS} ms with ${READ_PAUSE_MS} ms between a reader's (means)"
printf '%-6s %-9s %-28s %-28s %-13s %s\n' shape ops "version order ms (min-max)" "per-entry ms (min-max)" "peak RSS MiB" findings
declare -A order entry
for shape in plain run; do
  for n in 100000 1000000; do
    o=(); e=(); rss=0; found=0; ops=$n
    for _ in $(seq "$reps"); do
      read -r ops _ om em r f < <("$bin" "$n" "$shape" 8 "$COMMIT_MS" "$READ_MS" "$PAUSE_MS" "$READ_PAUSE_MS")
      o+=("$om"); e+=("$em"); (( r > rss )) && rss=$r; found=$((found + f))
    done
    read -r om olo ohi <<<"$(stat "${o[@]}")"
    read -r em elo ehi <<<"$(stat "${e[@]}")"
    order[$shape$n]=$om; entry[$shape$n]=$em
    printf '%-6s %-9s %-28s %-28s %-13s %s\n' "$shape" "$ops" "$om ($olo-$ohi)" "$em ($elo-$ehi)" "$((rss / 1024))" "$found"
  done
  python3 -c "import sys; s=sys.argv[1]; a=[float(x) for x in sys.argv[2:]]; print('%s: ratio 1,000,000 / 100,000: version order %.1f, per-entry %.1f' % (s, a[1]/a[0], a[3]/a[2]))" \
    "$shape" "${order[${shape}100000]}" "${order[${shape}1000000]}" "${entry[${shape}100000]}" "${entry[${shape}1000000]}"
done
err="$(mktemp)"; trap 'rm -f "$err"' EXIT
for n in 10000 30000; do
  read -r _ _ _ em _ _ <<<"$(REFERENCE=1 "$bin" "$n" plain 2>"$err")"
  ref=$(cat "$err")
  python3 -c "import sys; n,e,r=sys.argv[1:]; print('%s operations: per-entry %s ms, every pair %s ms: %.0fx' % (n, e, r, float(r)/max(float(e),1)))" "$n" "$em" "$ref"
done
