#!/usr/bin/env bash
# How close `bench plan`'s request estimate comes to what the S3 test endpoint counts: a
# panel (sizes 1,000 and 10,000, both variants, a continuous cell of 10 commits and a
# 2-writer cell bounded at 12 commits, 2 repetitions) estimated and run twice on one root:
# first from the model alone, then (its cells re-run under another key) from the first
# run's records. Prints each estimate, the server's count and their ratio.
#
#   scripts/figures/request-estimate.sh        (about 1 minute; needs a release build and moto)
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=scripts/figures/s3-endpoint.sh
. scripts/figures/s3-endpoint.sh
OPTS=(--root s3://bench/estimate "${S3_OPTS[@]}")
counted() {  # the server's count of requests since the last call (a conditional PUT is a PUT)
  curl -s -X DELETE "http://127.0.0.1:$PORT/_bench/counts" | python3 -c 'import json,sys
d=json.load(sys.stdin); print(sum(d[k] for k in ("get","put","list","head","delete","copy")))'
}
estimated() {  # the total of bench plan's estimate
  "$BENCH" plan "$WORK/p.toml" --out "$WORK/out" "${OPTS[@]}" | python3 -c 'import re,sys
line=[l for l in sys.stdin if l.startswith("requests to S3")][0]
counts=line.split(": ",1)[1].split(";")[0]
print(sum(int(m.replace(",","")) for m in re.findall(r"(?:^|, )([\d,]+) [A-Z]", counts)))'
}
for retries in 20 19; do
  cat > "$WORK/p.toml" <<PLAN
name = "estimate"
[matrix]
sizes = [1000, 10000]
inline = [true, false]
[continuous]
operations = 10
[concurrent]
concurrency = [2]
operations = 12
[run]
repetitions = 2
commit_retries = $retries
PLAN
  guess=$(estimated)
  counted > /dev/null
  "$BENCH" run "$WORK/p.toml" --out "$WORK/out" --progress lines "${OPTS[@]}" > /dev/null 2>&1
  real=$(counted)
  what=$([ "$retries" = 20 ] && echo "from the model" || echo "from the first run records")
  python3 -c "import sys; g, r = int(sys.argv[2]), int(sys.argv[3]); print(f'estimate {sys.argv[1]}: {g} requests; the server counted {r}; ratio {g / r:.3f}')" "$what" "$guess" "$real"
done
