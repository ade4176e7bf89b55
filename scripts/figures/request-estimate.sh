#!/usr/bin/env bash
# How close `bench plan`'s request estimate comes to what the S3 test endpoint counts: a
# panel (sizes 1,000 and 10,000, both variants, a continuous cell of 10 commits and a
# 2-writer cell bounded at 12 commits, 2 repetitions) estimated and run twice on one root:
# first from the model alone, then (its cells re-run under another key) from the first
# run's records. Prints each estimate, the server's count and their ratio, in all and kind
# by kind.
#
#   scripts/figures/request-estimate.sh        (about 1 minute; needs a release build and moto)
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=scripts/figures/s3-endpoint.sh
. scripts/figures/s3-endpoint.sh
OPTS=(--root s3://bench/estimate "${S3_OPTS[@]}")
KINDS="get head put list copy delete"
counted() {  # the server's counts since the last call, by kind (a conditional PUT is a PUT)
  curl -s -X DELETE "http://127.0.0.1:$PORT/_bench/counts" | python3 -c 'import json,sys
d=json.load(sys.stdin); print(" ".join(str(d[k]) for k in sys.argv[1].split()))' "$KINDS"
}
estimated() {  # bench plan's estimate, by kind
  "$BENCH" plan "$WORK/p.toml" --out "$WORK/out" "${OPTS[@]}" | python3 -c 'import re,sys
line=[l for l in sys.stdin if l.startswith("requests to S3")][0]
counts=line.split(": ",1)[1].split(";")[0]
by={w.lower(): int(n.replace(",","")) for n, w in re.findall(r"(?:^|, )([\d,]+) ([A-Z]+)", counts)}
print(" ".join(str(by[k]) for k in sys.argv[1].split()))' "$KINDS"
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
  python3 - "$what" "$KINDS" "$guess" "$real" <<'EOF'
import sys
what, kinds, guess, real = sys.argv[1], sys.argv[2].split(), sys.argv[3].split(), sys.argv[4].split()
g, r = [int(x) for x in guess], [int(x) for x in real]
print(f"estimate {what}: {sum(g)} requests; the server counted {sum(r)}; ratio {sum(g) / sum(r):.3f}")
print("  " + ", ".join(f"{k} {a}/{b} = {a / b:.2f}" if b else f"{k} {a}/0" for k, a, b in zip(kinds, g, r)))
EOF
done
