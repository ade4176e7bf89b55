#!/usr/bin/env bash
# What `run.local_requests = "s3"` changes on local disk: the same continuous cells (sizes
# 1,000 and 10,000, both variants, OPS commits) run with lance's own local store ("native")
# and with S3-shaped requests ("s3"), alternately, ROUNDS times; prints per cell the median
# throughput of each (with the range), their ratio, and the requests a commit makes in each.
#
#   scripts/figures/local-requests.sh [ROUNDS] [OPS]   (defaults: 3, 200)
set -euo pipefail
cd "$(dirname "$0")/../.."
ROUNDS=${1:-3}
OPS=${2:-200}
BENCH="${BENCH:-${CARGO_TARGET_DIR:-target}/release/bench}"
[ -x "$BENCH" ] || { echo "build first: cargo build --release" >&2; exit 1; }
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
for shape in native s3; do
  cat > "$WORK/$shape.toml" <<PLAN
name = "local-$shape"
[matrix]
sizes = [1000, 10000]
inline = [true, false]
[continuous]
operations = $OPS
[run]
local_requests = "$shape"
PLAN
done
for round in $(seq "$ROUNDS"); do
  for shape in native s3; do
    "$BENCH" run "$WORK/$shape.toml" --root "$WORK/store-$shape" --out "$WORK/$shape-$round" \
      --progress lines > /dev/null 2> "$WORK/log" || { tail -5 "$WORK/log" >&2; exit 1; }
  done
done
python3 - "$WORK" "$ROUNDS" <<'PY'
import json, statistics, sys
work, rounds = sys.argv[1], int(sys.argv[2])
tput, io = {}, {}
for shape in ("native", "s3"):
    for r in range(1, rounds + 1):
        for line in open(f"{work}/{shape}-{r}/results.jsonl"):
            rec = json.loads(line)
            assert rec["verified"], rec
            tput.setdefault((rec["bench_tag"], shape), []).append(rec["throughput_ops_per_sec"])
            io[(rec["bench_tag"], shape)] = rec["io_per_op"]
def kinds(d):
    return " ".join(f"{k} {d[k]:g}" for k in ("get", "head", "put", "conditional_put", "list") if d[k])
print(f"{rounds} rounds, native and s3 alternately; ops/s median (range)")
print(f"{'cell':<30} {'native':>20} {'s3':>20} {'s3/native':>9}")
for tag in sorted({t for t, _ in tput}):
    n, s = tput[(tag, "native")], tput[(tag, "s3")]
    fmt = lambda v: f"{statistics.median(v):.1f} ({min(v):.0f}-{max(v):.0f})"
    print(f"{tag:<30} {fmt(n):>20} {fmt(s):>20} {statistics.median(s) / statistics.median(n):>9.3f}")
print("requests a commit:")
for tag in sorted({t for t, _ in tput}):
    for shape in ("native", "s3"):
        print(f"  {tag:<30} {shape:<6} {kinds(io[(tag, shape)])}")
PY
