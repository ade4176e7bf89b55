#!/usr/bin/env bash
# The published shape, reproduced on this machine: a small panel against the S3 test
# endpoint with a network's latency (scripts/s3-server.py --latency-ms), printing per cell
# the throughput, the requests per commit and the errors.
#
#   scripts/s3-shape.sh [LATENCY_MS] [DURATION_SECS]     (defaults: 25 ms, 12 s)
#
# Panel: sizes 1,000 and 10,000; both variants; a continuous cell of 10 commits and
# concurrent cells of 1, 2, 4 and 8 writers; commit_retries = 3, so that contention shows
# as errors. Takes about 8 minutes. Needs a release build and moto (see the README).
set -euo pipefail
cd "$(dirname "$0")/.."
LATENCY=${1:-25}
DURATION=${2:-12}
BENCH="${BENCH:-${CARGO_TARGET_DIR:-target}/release/bench}"
[ -x "$BENCH" ] || { echo "build first: cargo build --release" >&2; exit 1; }
WORK=$(mktemp -d)
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
python3 scripts/s3-server.py --port "$PORT" --bucket bench --latency-ms "$LATENCY" \
  > "$WORK/server.out" 2>/dev/null &
SERVER=$!
trap 'kill $SERVER 2>/dev/null; rm -rf "$WORK"' EXIT
until grep -q ready "$WORK/server.out" 2>/dev/null; do sleep 0.2; done

cat > "$WORK/shape.toml" <<EOF
name = "shape"
[matrix]
sizes = [1000, 10000]
inline = [true, false]
[continuous]
operations = 10
[concurrent]
concurrency = [1, 2, 4, 8]
duration_secs = $DURATION
[run]
commit_retries = 3
EOF
export AWS_ACCESS_KEY_ID=testing AWS_SECRET_ACCESS_KEY=testing AWS_EC2_METADATA_DISABLED=true
start=$(date +%s)
"$BENCH" run "$WORK/shape.toml" --out "$WORK/out" --root s3://bench/shape \
  --storage-option "aws_endpoint=http://127.0.0.1:$PORT" --storage-option aws_allow_http=true \
  --storage-option aws_region=us-east-1 --progress lines 2> "$WORK/run.log" \
  || { tail -20 "$WORK/run.log"; exit 1; }
echo "S3 test endpoint on 127.0.0.1, ${LATENCY} ms per request; ${DURATION} s concurrent cells;"
echo "commit_retries = 3; write-create-namespace; $(($(date +%s) - start)) s in all"
python3 - "$WORK/out/results.jsonl" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
rows.sort(key=lambda r: (r["variant"], r["initial_entries"], r["mode"] != "continuous", r["concurrency"]))
print(f"{'variant':<13}{'rows':>7}  {'mode':<11}{'C':>3}{'ops/s':>8}{'p50 ms':>9}{'req/commit':>11}{'commits':>8}{'errors':>7}{'conflicts':>10}")
for r in rows:
    io = r.get("io_per_op") or {}
    req = sum(io.get(k, 0) for k in ("get", "put", "list", "head", "delete", "copy"))
    print(f"{r['variant']:<13}{r['initial_entries']:>7}  {r['mode']:<11}{r['concurrency']:>3}"
          f"{r['throughput_ops_per_sec']:>8.2f}{r['p50_latency_ms']:>9.0f}{req:>11.1f}"
          f"{r['total_operations']:>8}{r['errors']:>7}{r['conflict_errors']:>10}")
PY
