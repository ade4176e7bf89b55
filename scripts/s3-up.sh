#!/usr/bin/env bash
# The S3 test server (scripts/s3-server.py: moto, its faults on demand) on a free port of
# 127.0.0.1, in the background, with its bucket `bench`; stopped by scripts/s3-down.sh DIR.
#
#   scripts/s3-up.sh DIR [s3-server.py options]   then: . DIR/env
#
# DIR/env exports S3_ENDPOINT and the test credentials; DIR/pid is the server's pid and
# DIR/server.out its output. Needs moto (pip install 'moto[server]==5.1.22').
set -euo pipefail
dir=${1:?usage: scripts/s3-up.sh DIR [s3-server.py options]}
shift
mkdir -p "$dir"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
python3 "$(dirname "$0")/s3-server.py" --port "$port" --bucket bench "$@" > "$dir/server.out" 2>&1 &
echo $! > "$dir/pid"
for _ in $(seq 300); do
  if grep -q '^ready' "$dir/server.out" 2>/dev/null; then
    cat > "$dir/env" <<ENV
export S3_ENDPOINT=http://127.0.0.1:$port
export AWS_ACCESS_KEY_ID=testing AWS_SECRET_ACCESS_KEY=testing AWS_EC2_METADATA_DISABLED=true
ENV
    exit 0
  fi
  kill -0 "$(cat "$dir/pid")" 2>/dev/null || break
  sleep 0.2
done
echo "the S3 test server did not start (is moto installed? pip install 'moto[server]==5.1.22'):" >&2
tail -5 "$dir/server.out" >&2
kill "$(cat "$dir/pid")" 2>/dev/null || true
exit 1
