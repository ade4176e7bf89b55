#!/usr/bin/env bash
# Conditional PUT under races, on each S3 store the tests use: RACES races of WRITERS writers
# putting one new key with `If-None-Match: *` at once (scripts/figures/put-races.py), on
# moto alone (its own server), moto behind scripts/s3-server.py (which serialises PUTs, as
# the tests run it), Ceph's gateway (scripts/rgw-up.sh) and SeaweedFS
# (scripts/seaweed-up.sh), each on 127.0.0.1. Prints per store how many races had 0, 1, 2, …
# winners: a store that keeps the promise has 1 winner in every race.
#
#   scripts/figures/put-races.sh [RACES] [WRITERS]     (defaults: 1000 8; a few minutes)
set -euo pipefail
cd "$(dirname "$0")/../.."
RACES=${1:-1000}
WRITERS=${2:-8}
VENV="${BENCH_TEST_HOME:-$HOME/.cache/bench-test}/venv"
PY=python3
"$PY" -c "import moto, boto3" 2>/dev/null || PY="$VENV/bin/python3"
export AWS_ACCESS_KEY_ID=testing AWS_SECRET_ACCESS_KEY=testing AWS_EC2_METADATA_DISABLED=true
[ -n "${BENCH_WEED:-}" ] || { [ -x "$VENV/bin/weed" ] && export BENCH_WEED="$VENV/bin/weed"; }
WORK=$(mktemp -d)
pids=()
cleanup() {
  for p in ${pids[@]+"${pids[@]}"}; do kill "$p" 2>/dev/null || true; done
  scripts/rgw-down.sh "$WORK/rgw" >/dev/null 2>&1 || true
  scripts/seaweed-down.sh "$WORK/seaweed" >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT
port() { "$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_for() { for _ in $(seq 100); do curl -s -o /dev/null "$1" && return 0; sleep 0.2; done; return 1; }
RAW=$(port)
"$PY" -m moto.server -p "$RAW" >"$WORK/moto.log" 2>&1 &
pids+=($!)
wait_for "http://127.0.0.1:$RAW/"
"$PY" -c "import boto3; boto3.client('s3', endpoint_url='http://127.0.0.1:$RAW', region_name='us-east-1').create_bucket(Bucket='bench')"
PROXY=$(port)
"$PY" scripts/s3-server.py --port "$PROXY" --bucket bench >"$WORK/proxy.log" 2>&1 &
pids+=($!)
until grep -q ready "$WORK/proxy.log"; do sleep 0.2; done
scripts/rgw-up.sh "$WORK/rgw" >/dev/null
# shellcheck disable=SC1091
RGW=$(. "$WORK/rgw/env"; echo "$RGW_ENDPOINT")
scripts/seaweed-up.sh "$WORK/seaweed" >/dev/null
# shellcheck disable=SC1091
SEAWEED=$(. "$WORK/seaweed/env"; echo "$SEAWEED_ENDPOINT")
"$PY" scripts/figures/put-races.py --races "$RACES" --writers "$WRITERS" \
  "moto alone=http://127.0.0.1:$RAW" "moto behind s3-server.py=http://127.0.0.1:$PROXY" \
  "Ceph's gateway=$RGW" "SeaweedFS=$SEAWEED"
