#!/usr/bin/env bash
# Harness benchmark: how much does bench's harness add to what it measures?
#
# (a) N commits straight through DirectoryNamespace in one process (examples/harness.rs)
# (b) the same N commits as a continuous cell of `bench run`
# at a few sizes, on local disk; prints per-commit latency and throughput of both and their
# ratio. Then golden bootstrap speed and peak RSS at 100,000 and 1,000,000 rows.
#
#   scripts/harness-bench.sh [OPS] [SIZES...]      (defaults: 50 commits; 1000 10000 100000)
set -euo pipefail
cd "$(dirname "$0")/.."
ops="${1:-50}"; shift || true
sizes=("${@:-1000 10000 100000}")
sizes=(${sizes[*]})
target="${CARGO_TARGET_DIR:-target}"
cargo build --release --quiet --bin bench --example harness
bench="$target/release/bench"
harness="$target/release/examples/harness"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

printf '%-9s %-7s %14s %14s %14s %14s %8s\n' rows inline "direct ms" "bench ms" "direct ops/s" "bench ops/s" ratio
for inline in true false; do
  for rows in "${sizes[@]}"; do
    read -r _ dms dtps < <("$harness" direct "$work/direct" "$rows" "$ops" "$inline")
    cat > "$work/plan.toml" <<PLAN
name = "harness"
[matrix]
sizes = [$rows]
inline = [$inline]
[continuous]
operations = $ops
PLAN
    "$bench" run "$work/plan.toml" --out "$work/out-$inline-$rows" --progress lines 2>/dev/null
    line=$(tail -1 "$work/out-$inline-$rows/results.jsonl")
    btps=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["throughput_ops_per_sec"])' "$line")
    bms=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["avg_latency_ms"])' "$line")
    ratio=$(python3 -c "print(f'{$btps / $dtps:.3f}')")
    printf '%-9s %-7s %14.3f %14.3f %14.2f %14.2f %8s\n' "$rows" "$inline" "$dms" "$bms" "$dtps" "$btps" "$ratio"
  done
done
echo "ratio = bench ops/s / direct ops/s (1.0: the harness adds nothing)"
echo
printf '%-9s %10s %12s %14s\n' rows secs "rows/s" "peak RSS MiB"
for rows in 100000 1000000; do
  read -r _ r secs rps rss < <("$harness" golden "$work/golden" "$rows")
  printf '%-9s %10s %12s %14s\n' "$r" "$secs" "$rps" "$rss"
done
