#!/usr/bin/env bash
# Operations whose outcome bench cannot see, by fault and kind of cell: on the S3 test
# endpoint (moto, or S3_BACKEND=rgw: Ceph's gateway behind scripts/s3-server.py) made to lose
# the reply of every 4th conditional PUT after applying it, to refuse deletes of table data
# (403), to reset 5 % of connections before the request reaches the store, to answer 503 to
# 10 % of requests; and a worker killed in the middle of its third commit
# (BENCH_WORKER_KILL_MID_COMMIT), directly and through a REST server (local disk). Each fault
# runs the same cells: a continuous, a concurrent (2 writers) and a mixed cell (2 clients, a
# listing a commit) of write-create-namespace, the shared table's appends (continuous,
# concurrent, mixed with version reads), and a cell of roles (one writer declaring tables and
# dropping the golden's, whose tables have data, one reader listing them). Prints per (fault, cell), summed over REPS repetitions: the writes,
# how many ended unknown, how those resolved (landed / did not / not told apart), how many
# failed but applied, whether every run verified, and the readers' anomalies.
#
#   scripts/figures/faults.sh [REPS]     (default: 1)
set -euo pipefail
cd "$(dirname "$0")/../.."
REPS=${1:-1}
BENCH="${BENCH:-${CARGO_TARGET_DIR:-target}/release/bench}"
[ -x "$BENCH" ] || { echo "build first: cargo build --release" >&2; exit 1; }
WORK=$(mktemp -d)
SERVERS=()
cleanup() {
  for pid in ${SERVERS[@]+"${SERVERS[@]}"}; do kill "$pid" 2>/dev/null || true; done
  [ "${S3_BACKEND:-moto}" = rgw ] && scripts/rgw-down.sh "$WORK/rgw" >/dev/null 2>&1
  rm -rf "$WORK"
}
trap cleanup EXIT
export AWS_ACCESS_KEY_ID=testing AWS_SECRET_ACCESS_KEY=testing AWS_EC2_METADATA_DISABLED=true
UPSTREAM=()
if [ "${S3_BACKEND:-moto}" = rgw ]; then
  scripts/rgw-up.sh "$WORK/rgw" > "$WORK/rgw.env"
  UPSTREAM=(--upstream "$(sed -n 's/^export RGW_ENDPOINT=//p' "$WORK/rgw.env")")
fi

# An S3 test server with the options given, on a free port; sets PORT.
server() {
  PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  python3 scripts/s3-server.py --port "$PORT" --bucket bench ${UPSTREAM[@]+"${UPSTREAM[@]}"} "$@" \
    > "$WORK/server-$PORT.out" 2>&1 &
  SERVERS+=($!)
  for _ in $(seq 300); do
    grep -q ready "$WORK/server-$PORT.out" 2>/dev/null && return 0
    sleep 0.2
  done
  echo "faults: the S3 test server did not start:" >&2
  tail -5 "$WORK/server-$PORT.out" >&2
  exit 1
}

# A continuous, a concurrent and a mixed cell of OPERATION on a golden of ROWS (and the
# TABLE lines), the mixed cell reading READ between its commits.
cells() {
  local name=$1 operation=$2 rows=$3 read=$4 table=$5
  cat > "$WORK/$name.toml" <<EOF
name = "$name"
operation = "$operation"
[matrix]
sizes = [$rows]
inline = [false]
$table
[continuous]
operations = 20
[concurrent]
concurrency = [2]
duration_secs = 3
[mixed]
clients = [2]
reads_per_write = 1
duration_secs = 3
read_operation = "$read"
EOF
}
cells kinds write-create-namespace 100 warm-read-list-namespaces ""
cells table write-table-append 20 warm-read-list-table-versions "table_versions = [5]"
cat > "$WORK/roles.toml" <<'EOF'
name = "roles"
[fixture]
width = 1
depth = 1
tables_per_namespace = 60
table_data = true
[matrix]
inline = [false]
[workload]
duration_secs = 3
[[roles]]
name = "writers"
clients = 1
rate = 10
[roles.mix]
"write-declare-table" = 1
"write-drop-table" = 1
[[roles]]
name = "readers"
clients = 1
[roles.mix]
"warm-read-list-tables" = 1
EOF

# Every plan under one fault: each on a fresh server with ARGS (so that each sweep's preflight
# meets the server as it starts), or on local disk with "local"; the environment given before
# it reaches bench, and EXTRA (bench's options) every sweep.
faulty() {
  local name=$1; shift
  local plan root opts
  for plan in kinds table roles; do
    opts=()
    if [ "$1" = local ]; then
      root="$WORK/$name-store"
    else
      server "$@"
      root="s3://bench/$name"
      opts=(--storage-option "aws_endpoint=http://127.0.0.1:$PORT"
            --storage-option aws_allow_http=true --storage-option aws_region=us-east-1)
    fi
    local t0=$SECONDS
    "$BENCH" run "$WORK/$plan.toml" --out "$WORK/$name/$plan" --root "$root/$plan" \
      ${opts[@]+"${opts[@]}"} --set "run.repetitions=$REPS" ${EXTRA[@]+"${EXTRA[@]}"} \
      --progress lines \
      > /dev/null 2> "$WORK/$name-$plan.log" || true
    echo "$name $plan: $((SECONDS - t0)) s" >> "$WORK/times"
    [ -s "$WORK/$name/$plan/results.jsonl" ] || { echo "$name $plan:" >&2; tail -3 "$WORK/$name-$plan.log" >&2; }
  done
}

faulty lost-replies --lose-reply-every 4
# One run a cell: a copy the store will not delete from cannot be replaced by the next.
EXTRA=(--set run.repetitions=1)
faulty denied-deletes --deny-delete /data/
EXTRA=()
faulty resets --reset-rate 0.05 --seed 3
faulty throttled --throttle-rate 0.1 --seed 5
BENCH_WORKER_KILL_MID_COMMIT=0:3 faulty killed-worker local
# Through a REST server, which finishes the killed worker's commit.
EXTRA=(--set 'matrix.transport=["rest"]')
BENCH_WORKER_KILL_MID_COMMIT=0:3 faulty killed-rest local

python3 - "$WORK" "$REPS" <<'PY'
import json, os, sys
work, reps = sys.argv[1], sys.argv[2]
faults = ["lost-replies", "denied-deletes", "resets", "throttled", "killed-worker", "killed-rest"]
print(f"summed over a cell's runs; unknown: landed / did not / not told apart")
print(f"{'fault':<16}{'cell':<38}{'runs':>5}{'writes':>7}{'errors':>7}{'unknown':>8}{'resolved':>13}"
      f"{'failed but applied':>20}{'verified':>10}{'anomalies':>10}")
for fault in faults:
    for plan in ("kinds", "table", "roles"):
        path = f"{work}/{fault}/{plan}/results.jsonl"
        if not os.path.exists(path):
            print(f"{fault:<16}{plan:<38}  (no records: see its log)")
            continue
        cells = {}
        for l in open(path):
            r = json.loads(l)
            cells.setdefault(r["bench_tag"], []).append(r)
        for tag, rs in cells.items():
            o = [r.get("outcomes") or {} for r in rs]
            s = lambda k: sum(x.get(k, 0) for x in o)
            unknown, landed, not_landed = s("unknown"), s("unknown_landed"), s("unknown_not_landed")
            writes = s("ok") + s("failed") + unknown
            errors = sum(r["errors"] for r in rs)
            cs = [r["consistency"] for r in rs if r.get("consistency")]
            anomalies = (str(sum(c["stale_reads"] + c["monotonic_violations"] + c["phantoms"] for c in cs))
                         if cs else "-")
            verified = "all" if all(r["verified"] for r in rs) else "NOT"
            short = (tag.replace("_inline_false", "").replace("_rows_", " ")
                     .replace("_transport-rest", " rest"))
            print(f"{fault:<16}{short:<38}{len(rs):>5}{writes:>7}{errors:>7}{unknown:>8}"
                  f"{f'{landed} / {not_landed} / {unknown - landed - not_landed}':>13}"
                  f"{s('failed_but_applied'):>20}{verified:>10}{anomalies:>10}")
PY
cat "$WORK/times"
