#!/usr/bin/env bash
# Harness benchmark: how much does bench's harness add to what it measures?
#
# (a) N commits straight through DirectoryNamespace in one process (examples/harness.rs)
# (b) the same, with the request accounting of the workers (a counting store layer that
#     also times every request with its kind, bytes and key -- the key as for a traced
#     operation, the worst case -- a snapshot of the counts and the critical path of every
#     commit with its wait by kind)
# (c) the same N commits as a continuous cell of `bench run`
# at a few sizes, on local disk; prints per-commit latency and throughput and the ratios
# counted/direct (what the accounting costs) and bench/direct (what the harness adds).
# (a) and (b) run alternately, three times each, and the medians are compared.
# Then golden bootstrap speed and peak RSS at 100,000 and 1,000,000 rows.
#
#   scripts/figures/harness-bench.sh [OPS] [SIZES...]      (defaults: 50 commits; 1000 10000 100000)
set -euo pipefail
cd "$(dirname "$0")/../.."
ops="${1:-50}"; shift || true
sizes=("${@:-1000 10000 100000}")
sizes=(${sizes[*]})
target="${CARGO_TARGET_DIR:-target}"
cargo build --release --quiet --bin bench --example harness
bench="$target/release/bench"
harness="$target/release/examples/harness"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

median() { python3 -c 'import statistics,sys; print(statistics.median(float(x) for x in sys.argv[1:]))' "$@"; }
printf '%-7s %-6s %10s %10s %10s %12s %12s %12s %9s %9s\n' rows inline "direct ms" "counted ms" "bench ms" "direct op/s" "counted op/s" "bench op/s" "cnt/dir" "bench/dir"
for inline in true false; do
  for rows in "${sizes[@]}"; do
    d=(); c=(); dm=(); cm=()
    for rep in 1 2 3; do
      read -r _ ms tps < <("$harness" direct "$work/direct" "$rows" "$ops" "$inline" 2>/dev/null)
      d+=("$tps"); dm+=("$ms")
      read -r _ ms tps < <("$harness" direct "$work/direct" "$rows" "$ops" "$inline" counted 2>/dev/null)
      c+=("$tps"); cm+=("$ms")
    done
    dtps=$(median "${d[@]}"); ctps=$(median "${c[@]}"); dms=$(median "${dm[@]}"); cms=$(median "${cm[@]}")
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
    printf '%-7s %-6s %10.3f %10.3f %10.3f %12.2f %12.2f %12.2f %9.3f %9.3f\n' "$rows" "$inline" \
      "$dms" "$cms" "$bms" "$dtps" "$ctps" "$btps" \
      "$(python3 -c "print($ctps / $dtps)")" "$(python3 -c "print($btps / $dtps)")"
  done
done
echo "cnt/dir = counted / direct ops/s (1.0: the accounting costs nothing); bench/dir = bench /"
echo "direct ops/s (1.0: the harness adds nothing); direct and counted: medians of 3 alternating runs"
echo
printf '%-9s %10s %12s %14s\n' rows secs "rows/s" "peak RSS MiB"
for rows in 100000 1000000; do
  read -r _ r secs rps rss < <("$harness" golden "$work/golden" "$rows")
  printf '%-9s %10s %12s %14s\n' "$r" "$secs" "$rps" "$rss"
done
