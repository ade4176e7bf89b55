#!/usr/bin/env bash
# Stop the S3 test server scripts/s3-up.sh DIR started (by its pid file) and remove DIR.
set -euo pipefail
dir=${1:?usage: scripts/s3-down.sh DIR}
if [ -f "$dir/pid" ]; then
  pid=$(cat "$dir/pid")
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
fi
rm -rf "$dir"
