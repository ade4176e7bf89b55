#!/usr/bin/env bash
# A fault campaign's coverage and pace: plans/campaign.toml (or PLAN) on the S3 test
# endpoint (s3-endpoint.sh: moto, or S3_BACKEND=rgw or seaweed: Ceph's gateway or SeaweedFS, behind
# scripts/s3-server.py), once for each OPERATION given (default: write-create-namespace),
# the same faults and positions. Prints per operation: the points run, how many of each
# class (safe, unknown resolved, error surfaced, undecided, not reached, and the findings
# ANOMALY, STUCK, WRONG, LOST, UNREADABLE), the wall time and the points a minute; then every red
# point with its witness, from the campaign's matrix (campaign.md). BENCH names the build
# (one against another lance: scripts/track-record.sh build VERSION); its versions are
# printed first. EXTRA: more options of `bench run` (e.g. "--set campaign.requests=4");
# OUT: a folder that keeps each operation's campaign.md (as campaign-OPERATION.md).
#
#   scripts/figures/campaign.sh [OPERATION...]
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/figures/s3-endpoint.sh
PLAN="${PLAN:-plans/campaign.toml}"
OPERATIONS=("$@")
[ ${#OPERATIONS[@]} -gt 0 ] || OPERATIONS=(write-create-namespace)
echo "bench: $("$BENCH" worker-info); plan: $PLAN; store: ${S3_BACKEND:-moto}"
for op in "${OPERATIONS[@]}"; do
  sed "s/^operation = .*/operation = \"$op\"/; s/^name = .*/name = \"campaign-$op\"/" "$PLAN" \
    > "$WORK/$op.toml"
  start=$(date +%s.%N)
  set +e
  # shellcheck disable=SC2086
  "$BENCH" run "$WORK/$op.toml" --out "$WORK/out-$op" --progress lines \
    --root "s3://bench/campaign-$op" "${S3_OPTS[@]}" ${EXTRA:-} > "$WORK/run-$op.out" 2>&1
  code=$?
  set -e
  end=$(date +%s.%N)
  if [ -n "${OUT:-}" ] && [ -f "$WORK/out-$op/campaign.md" ]; then
    mkdir -p "$OUT" && cp "$WORK/out-$op/campaign.md" "$OUT/campaign-$op.md"
  fi
  python3 - "$WORK/out-$op/campaign.md" "$op" "$start" "$end" "$code" <<'EOF'
import sys
path, op, start, end, code = sys.argv[1:]
secs = float(end) - float(start)
try:
    text = open(path).read()
except OSError:
    sys.exit(f"{op}: no campaign.md (exit {code})")
marks = {"ok": "safe", "u": "unknown resolved", "e": "error surfaced", "?": "undecided",
         "·": "not reached", "ANOM": "ANOMALY", "STUCK": "STUCK", "WRONG": "WRONG",
         "LOST": "LOST", "UNREAD": "UNREADABLE"}
counts = {v: 0 for v in marks.values()}
for line in text.splitlines():
    if line.startswith("| ") and not line.startswith("| fault"):
        for cell in line.strip().strip("|").split("|")[1:]:
            if cell.strip() in marks:
                counts[marks[cell.strip()]] += 1
points = sum(counts.values())
print(f"{op}: {points} fault points (and the trace) in {secs / 60:.1f} min, "
      f"{points / (secs / 60):.1f} points a minute; exit {code}")
print("  " + ", ".join(f"{k} {v}" for k, v in counts.items()))
for line in text.splitlines():
    if line.startswith("- **"):
        print("  " + line[2:])
EOF
done
