#!/usr/bin/env bash
# How the checks on the `__manifest` version order scale: a synthetic history of 100,000 and
# 1,000,000 operations (8 writers creating tables, 8 readers listing and looking up, every
# read showing exactly its version; crates/bench-core/examples/order_scale.rs), each checked
# three times in a fresh process. Prints per size the median and range of the check's time,
# the peak resident memory of the process (history included), and the ratio of the medians
# 1,000,000 / 100,000 (10 where the check is linear); then the per-entry checks (stale reads,
# lag) of 10,000 and 30,000 operations of the same shape, once each, for comparison.
#
#   scripts/figures/order-scale.sh [REPS]      (default 3)
set -euo pipefail
cd "$(dirname "$0")/../.."
reps="${1:-3}"
target="${CARGO_TARGET_DIR:-target}"
cargo build --quiet --release -p bench-core --example order_scale
bin="$target/release/examples/order_scale"
printf '%-9s %-26s %-14s %-12s %s\n' ops "check ms median (min-max)" "build ms" "peak RSS MiB" violations
declare -A med
for n in 100000 1000000; do
  checks=(); builds=(); rss=0; bad=0
  for _ in $(seq "$reps"); do
    read -r _ b c r v < <("$bin" "$n")
    checks+=("$c"); builds+=("$b"); (( r > rss )) && rss=$r; bad=$((bad + v))
  done
  stats=$(python3 -c 'import statistics,sys; x=[float(a) for a in sys.argv[1:]]; print(statistics.median(x), min(x), max(x))' "${checks[@]}")
  read -r m lo hi <<<"$stats"
  bm=$(python3 -c 'import statistics,sys; print(statistics.median(float(a) for a in sys.argv[1:]))' "${builds[@]}")
  med[$n]=$m
  printf '%-9s %-26s %-14s %-12s %s\n' "$n" "$m ($lo-$hi)" "$bm" "$((rss / 1024))" "$bad"
done
python3 -c "import sys; print('ratio of check medians 1,000,000 / 100,000: %.1f' % (float(sys.argv[2]) / float(sys.argv[1])))" "${med[100000]}" "${med[1000000]}"
# The per-entry checks (stale reads, lag) on the same shape, once each: they compare every
# read with every commit of its namespace.
for n in 10000 30000; do
  read -r _ _ c _ _ p < <(ALSO_PER_ENTRY=1 "$bin" "$n")
  printf 'per-entry checks, %s operations: %s ms (version order: %s ms)\n' "$n" "$p" "$c"
done
