# Sourced (not run) by the scripts that measure on the S3 test endpoint: checks the release
# build, makes a work folder, starts scripts/s3-server.py on a free port of 127.0.0.1 (with
# the options in S3_SERVER_ARGS, e.g. "--latency-ms 25") and waits for it; at exit the
# server is stopped and the folder removed. Sets BENCH, WORK, PORT, the test credentials in
# the environment, and S3_OPTS: bench's storage options for the endpoint (give --root too);
# defines run_sweep NAME PLAN [ARGS...]: a sweep into $WORK/NAME, its log in
# $WORK/NAME.log, its time appended to $WORK/times (its log's end said if it fails).
# With S3_BACKEND=rgw the endpoint is Ceph's gateway (scripts/rgw-up.sh), with
# S3_BACKEND=seaweed SeaweedFS's S3 gateway (scripts/seaweed-up.sh), each in the work folder
# and stopped at exit, behind scripts/s3-server.py --upstream; by default, moto.
BENCH="${BENCH:-${CARGO_TARGET_DIR:-target}/release/bench}"
run_sweep() {
  local name=$1 plan=$2; shift 2
  local t0=$SECONDS
  "$BENCH" run "$plan" --out "$WORK/$name" --progress lines "$@" > /dev/null 2> "$WORK/$name.log" \
    || { tail -5 "$WORK/$name.log" >&2; exit 1; }
  echo "$name: $((SECONDS - t0)) s" >> "$WORK/times"
}
[ -x "$BENCH" ] || { echo "build first: cargo build --release" >&2; exit 1; }
WORK=$(mktemp -d)
# The folder goes however this ends, a failed start of Ceph's gateway included (the trap
# below replaces this one once the server is up).
trap 'rm -rf "$WORK"' EXIT
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
export AWS_ACCESS_KEY_ID=testing AWS_SECRET_ACCESS_KEY=testing AWS_EC2_METADATA_DISABLED=true
UPSTREAM=()
DOWN=:
case "${S3_BACKEND:-moto}" in
  moto) ;;
  rgw)
    DOWN="scripts/rgw-down.sh $WORK/rgw"
    scripts/rgw-up.sh "$WORK/rgw" > "$WORK/rgw.env" || { $DOWN >/dev/null 2>&1; exit 1; }
    UPSTREAM=(--upstream "$(sed -n 's/^export RGW_ENDPOINT=//p' "$WORK/rgw.env")")
    ;;
  seaweed)
    DOWN="scripts/seaweed-down.sh $WORK/seaweed"
    scripts/seaweed-up.sh "$WORK/seaweed" > "$WORK/seaweed.env" || { $DOWN >/dev/null 2>&1; exit 1; }
    UPSTREAM=(--upstream "$(sed -n 's/^export SEAWEED_ENDPOINT=//p' "$WORK/seaweed.env")")
    ;;
  *) echo "S3_BACKEND is moto, rgw or seaweed, not ${S3_BACKEND}" >&2; exit 2 ;;
esac
# shellcheck disable=SC2086
python3 scripts/s3-server.py --port "$PORT" --bucket bench "${UPSTREAM[@]}" ${S3_SERVER_ARGS:-} \
  > "$WORK/server.out" 2>&1 &
S3_SERVER=$!
trap 'kill $S3_SERVER 2>/dev/null; $DOWN >/dev/null 2>&1; rm -rf "$WORK"' EXIT
# Until it says ready; a server that dies first (a port taken, moto missing) is said, not
# waited for; nor one that says nothing for a minute.
for _ in $(seq 300); do
  grep -q ready "$WORK/server.out" 2>/dev/null && break
  if ! kill -0 "$S3_SERVER" 2>/dev/null; then
    echo "s3-endpoint: scripts/s3-server.py exited before it was ready:" >&2
    tail -n 5 "$WORK/server.out" >&2
    exit 1
  fi
  sleep 0.2
done
grep -q ready "$WORK/server.out" || { echo "s3-endpoint: the S3 server was not ready within 60 s" >&2; exit 1; }
S3_OPTS=(--storage-option "aws_endpoint=http://127.0.0.1:$PORT"
         --storage-option aws_allow_http=true --storage-option aws_region=us-east-1)
