#!/usr/bin/env bash
# Through a catalog server or straight to the store (plans/rest-vs-direct.toml: direct, one
# REST server, two; 1, 4, 16, 64 writers; inline indices on and off; 10 s cells): the plan
# with REPS repetitions (interleaved) on local disk (WHERE=local, the default), on the S3
# test endpoint (WHERE=s3; S3_BACKEND=moto or rgw, as scripts/figures/s3-endpoint.sh), or
# both (WHERE="local s3").
# Prints per cell the median commits/s with its range over the repetitions, the failed
# commits (all repetitions), and for rest cells the split of a commit's time (transport,
# waiting in the server, the namespace's own) with how far the parts are from the client's
# mean; writes the report's charts of throughput and errors against writers (one line per
# variant) to OUT (default: the work folder, removed at exit).
#
#   scripts/figures/rest-vs-direct.sh [REPS] [OUT] [WHERE]   (defaults: 3, none, local)
#   S3_BACKEND=rgw scripts/figures/rest-vs-direct.sh 1 /tmp/rest-figs s3
set -euo pipefail
cd "$(dirname "$0")/../.."
REPS=${1:-3}
OUT=${2:-}
read -r -a places <<< "${3:-local}"
S3_SERVER_ARGS=""
# shellcheck source=s3-endpoint.sh
source scripts/figures/s3-endpoint.sh
sed "s/^repetitions = 3/repetitions = $REPS/" plans/rest-vs-direct.toml > "$WORK/plan.toml"
for p in "${places[@]}"; do
  case "$p" in
    local) run_sweep local "$WORK/plan.toml" --root "$WORK/store-local" ;;
    s3) run_sweep s3 "$WORK/plan.toml" --root s3://bench/rest "${S3_OPTS[@]}" ;;
    *) echo "WHERE is local, s3 or both (\"local s3\"), not $p" >&2; exit 2 ;;
  esac
done
if [ -n "$OUT" ]; then
  mkdir -p "$OUT"
  for p in "${places[@]}"; do
    for f in "$WORK/$p"/charts/concurrent_*_rows_*.svg; do cp "$f" "$OUT/${p}_$(basename "$f")"; done
  done
fi
python3 - "$WORK" "${S3_BACKEND:-moto}" "${places[@]}" <<'PY'
import json, statistics, sys
work, backend, places = sys.argv[1], sys.argv[2], sys.argv[3:]
def spread(v, fmt="{:.1f}"):
    return f"{fmt.format(statistics.median(v))} ({fmt.format(min(v))}-{fmt.format(max(v))})"
print(open(f"{work}/times").read())
for place in places:
    cells = {}
    for line in open(f"{work}/{place}/results.jsonl"):
        r = json.loads(line)
        assert r["verified"], r["bench_tag"]
        key = (r["variant"], r.get("transport", "direct"), (r.get("rest") or {}).get("servers", 0), r["concurrency"])
        cells.setdefault(key, []).append(r)
    where = "local disk" if place == "local" else f"S3 endpoint ({backend})"
    print(f"== {where}: commits/s median (range) | failed commits (conflicts) | rest: transport, wait, backend ms a commit (parts vs client)")
    for (variant, transport, servers, c), rs in sorted(cells.items()):
        name = transport if transport == "direct" else f"rest x{servers}"
        tps = spread([r["throughput_ops_per_sec"] for r in rs])
        errs = sum(r["errors"] for r in rs)
        conf = sum(r["conflict_errors"] for r in rs)
        line = f"  {variant:<12} {name:<8} c={c:<3} {tps:>24} {errs:>5} ({conf})"
        if transport == "rest":
            med = lambda k: statistics.median(r["rest"][k] for r in rs)
            parts = med("transport_ms_per_op") + med("server_wait_ms_per_op") + med("backend_ms_per_op")
            worst = max(abs(r["rest"]["transport_ms_per_op"] + r["rest"]["server_wait_ms_per_op"]
                            + r["rest"]["backend_ms_per_op"] - r["rest"]["client_ms_per_op"])
                        / r["rest"]["client_ms_per_op"] for r in rs)
            line += (f"  {med('transport_ms_per_op'):6.2f} {med('server_wait_ms_per_op'):8.2f}"
                     f" {med('backend_ms_per_op'):7.2f}  (parts {parts:.2f} vs client"
                     f" {med('client_ms_per_op'):.2f}; worst run {worst * 100:.2f} % apart)")
        print(line)
PY
