#!/usr/bin/env bash
# How the consistency checker scales: a synthetic history of 100,000 and 1,000,000
# operations (8 writers creating tables, 8 readers listing and looking up, every read showing
# exactly its version; crates/bench-core/examples/order_scale.rs), each checked REPS times in
# a fresh process. Prints per size the median and range of the time of the checks on the
# `__manifest` version order and of the per-entry checks (stale reads, lag, monotonic reads,
# phantoms), the peak resident memory of the process (history included), what they found
# (0), and the ratio of the medians 1,000,000 / 100,000 (10 where a check is linear). Then,
# at 10,000 and 30,000 operations, the per-entry checks beside the same checks holding every
# read against every commit it observes (reads x commits), in one process, once each: their
# times and the ratio.
#
#   scripts/figures/order-scale.sh [REPS]      (default 3)
set -euo pipefail
cd "$(dirname "$0")/../.."
reps="${1:-3}"
target="${CARGO_TARGET_DIR:-target}"
cargo build --quiet --release -p bench-core --example order_scale
bin="$target/release/examples/order_scale"
stat() { python3 -c 'import statistics,sys; x=[float(a) for a in sys.argv[1:]]; print("%g %g %g" % (statistics.median(x), min(x), max(x)))' "$@"; }
printf '%-9s %-28s %-28s %-13s %s\n' ops "version order ms (min-max)" "per-entry ms (min-max)" "peak RSS MiB" findings
declare -A order entry
for n in 100000 1000000; do
  o=(); e=(); rss=0; found=0
  for _ in $(seq "$reps"); do
    read -r _ _ om em r f < <("$bin" "$n")
    o+=("$om"); e+=("$em"); (( r > rss )) && rss=$r; found=$((found + f))
  done
  read -r om olo ohi <<<"$(stat "${o[@]}")"
  read -r em elo ehi <<<"$(stat "${e[@]}")"
  order[$n]=$om; entry[$n]=$em
  printf '%-9s %-28s %-28s %-13s %s\n' "$n" "$om ($olo-$ohi)" "$em ($elo-$ehi)" "$((rss / 1024))" "$found"
done
python3 -c "import sys; a=[float(x) for x in sys.argv[1:]]; print('ratio 1,000,000 / 100,000: version order %.1f, per-entry %.1f' % (a[1]/a[0], a[3]/a[2]))" \
  "${order[100000]}" "${order[1000000]}" "${entry[100000]}" "${entry[1000000]}"
err="$(mktemp)"; trap 'rm -f "$err"' EXIT
for n in 10000 30000; do
  read -r _ _ _ em _ _ <<<"$(REFERENCE=1 "$bin" "$n" 2>"$err")"
  ref=$(cat "$err")
  python3 -c "import sys; n,e,r=sys.argv[1:]; print('%s operations: per-entry %s ms, every pair %s ms: %.0fx' % (n, e, r, float(r)/max(float(e),1)))" "$n" "$em" "$ref"
done
