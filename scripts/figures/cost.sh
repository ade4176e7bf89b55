#!/usr/bin/env bash
# What a catalog costs: runs plans/default.toml and plans/catalog-mixed.toml (or the plans
# named) on local disk with S3's requests (run.local_requests = "s3": the requests the same
# commits make on S3), and prints per cell what a million of its operations cost on each
# store of bench's price table (medians over the repetitions, min–max beside) and how far
# its typical operation is above its floor (and a commit, the bytes it wrote beyond the catalog's
# state); a mixed cell's reads the same, apart; for a cell of roles, each (role, operation)'s
# dollars. Every figure is the record's: its billed requests times the table's prices.
#
#   scripts/figures/cost.sh [PLAN...]        (default: default catalog-mixed; about 10 min)
set -euo pipefail
cd "$(dirname "$0")/../.."
PLANS=("${@:-default catalog-mixed}")
read -r -a PLANS <<< "${PLANS[*]}"
BENCH="${BENCH:-${CARGO_TARGET_DIR:-target}/release/bench}"
[ -x "$BENCH" ] || { echo "build first: cargo build --release" >&2; exit 1; }
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
for p in "${PLANS[@]}"; do
  t0=$SECONDS
  "$BENCH" run "plans/$p.toml" --out "$WORK/$p" --root "$WORK/store-$p" --progress lines \
    --set 'run.local_requests="s3"' > /dev/null 2> "$WORK/$p.log" \
    || { tail -5 "$WORK/$p.log" >&2; exit 1; }
  echo "$p: $((SECONDS - t0)) s"
done
python3 - "$WORK" "${PLANS[@]}" <<'PY'
import json, statistics, sys
work, plans = sys.argv[1], sys.argv[2:]
STORES = ["s3-standard", "s3-express", "gcs-standard", "azure-hot", "r2"]
def cells(plan):
    out = {}
    for l in open(f"{work}/{plan}/results.jsonl"):
        r = json.loads(l)
        assert r["verified"], (r["bench_tag"], r["verify_error"])
        out.setdefault(r["bench_tag"], []).append(r)
    return out
def usd(v):
    return f"{statistics.median(v):.2f}" if max(v) - min(v) < 0.005 else \
        f"{statistics.median(v):.2f} ({min(v):.2f}–{max(v):.2f})"
for plan in plans:
    cs = cells(plan)
    n = max(len(rs) for rs in cs.values())
    print(f"\n{plan}: {len(cs)} cells, {n} repetition(s) each, every run verified")
    print("dollars per million successful operations (median, min–max over the runs):")
    print(f"{'cell':<42}" + "".join(f"{s:>22}" for s in STORES) + "  requests over the floor (median op)")
    for tag, rs in cs.items():
        if rs[0].get("roles"):
            continue
        row = [usd([r["cost"]["usd_per_million_ops"][s] for r in rs]) for s in STORES]
        f = rs[0]["floor"]
        over = ", ".join(f"+{v:g} {k.upper()}" for k, v in
                         sorted(f["over_by_kind"].items(), key=lambda kv: -kv[1]) if v > 0)
        eff = statistics.median(r["floor"]["efficiency"] for r in rs)
        b = f.get("bytes")
        moved = (f"; {b['written_over'] / 1000:+.1f} kB written over a state of "
                 f"{b['floor_written'] / 1000:.1f} kB") if b and b["floor_written"] else ""
        print(f"{tag:<42}" + "".join(f"{x:>22}" for x in row) +
              f"  {f['requests_over']:g} over {f['floor_requests']} ({over or 'none'}); floor/requests {eff:.2f}{moved}")
        # A mixed cell's reads: their own cost and floor, over the successful reads.
        reads = rs[0].get("reads") or {}
        if reads.get("cost"):
            row = [usd([r["reads"]["cost"]["usd_per_million_ops"][s] for r in rs]) for s in STORES]
            rf = reads["floor"]
            print(f"{'  its reads (' + reads['operation'] + ')':<42}" + "".join(f"{x:>22}" for x in row) +
                  f"  {rf['requests_over']:g} over {rf['floor_requests']}; floor/requests {rf['efficiency']:.2f}")
    for tag, rs in cs.items():
        if not rs[0].get("roles"):
            continue
        print(f"{tag} (per role and operation):")
        for i, f0 in enumerate(rs[0]["roles"]):
            if f0.get("usd_per_million_ops") is None:
                continue
            row = [usd([r["roles"][i]["usd_per_million_ops"][s] for r in rs]) for s in STORES]
            name = f"  {f0['role']} {f0['operation']}"
            print(f"{name:<42}" + "".join(f"{x:>22}" for x in row))
PY
