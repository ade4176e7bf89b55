#!/usr/bin/env bash
# Keeping a catalog: plans/soak.toml (one writer declaring tables at 20 commits a second,
# three readers, and a maintenance role running lance's cleanup of `__manifest` every 10 s,
# keeping the last 200 versions) for MINUTES on local disk, then the same plan without the
# maintenance role; then both for MOTO_MINUTES on the S3 test endpoint (moto), where a commit
# takes longer: the writer at 3 commits a second, the readers at 10 and 5 reads a second, the
# cleanup keeping the last 30 versions (--set roles.<name>.<key>). Prints per run
# what `__manifest` held minute by minute (versions, MB), its growth over the window, the
# storage dollars a month on S3 Standard now and, for the runs that keep every version,
# after 30 days by the record's model (`storage.projection`); the model checked: fitted on
# the first fifth of each such run (2 minutes of 10), its prediction of the bytes at the
# run's end beside
# what was measured (crates/bench-core/examples/storage_model.rs); what the cleanups removed and
# cost, the other roles' p50 and p99 while a cleanup ran and while none did, and the
# consistency checker's findings. Every figure is the record's.
#
#   scripts/figures/soak.sh [MINUTES] [MOTO_MINUTES]     (defaults: 10 2; about 30 minutes)
#   KEEP=DIR scripts/figures/soak.sh                      (the four runs' records kept in DIR)
set -euo pipefail
cd "$(dirname "$0")/../.."
MINUTES=${1:-10}
MOTO_MINUTES=${2:-2}
# shellcheck source=s3-endpoint.sh
source scripts/figures/s3-endpoint.sh
# The same plan without its maintenance role.
python3 - plans/soak.toml "$WORK/soak-kept.toml" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
cut = re.sub(r'\[\[roles\]\]\nname = "maintenance".*?(?=\n\[run\])', "", text, flags=re.S)
assert cut != text, "plans/soak.toml has no maintenance role to leave out"
open(sys.argv[2], "w").write(cut.replace('name = "soak"', 'name = "soak-kept"'))
PY
long() { echo --set "workload.duration_secs=$(($1 * 60))" --set "run.cell_timeout_secs=$(($1 * 60 + 600))"; }
# shellcheck disable=SC2046
run_sweep local-cleanup plans/soak.toml --root "$WORK/store" $(long "$MINUTES")
# shellcheck disable=SC2046
run_sweep local-kept "$WORK/soak-kept.toml" --root "$WORK/store" $(long "$MINUTES")
MOTO=(--set roles.writer.rate=3 --set roles.readers.rate=10 --set roles.lookers.rate=5)
# shellcheck disable=SC2046
run_sweep moto-cleanup plans/soak.toml --root s3://bench/soak "${S3_OPTS[@]}" $(long "$MOTO_MINUTES") \
  "${MOTO[@]}" --set roles.maintenance.keep_versions=30
# shellcheck disable=SC2046
run_sweep moto-kept "$WORK/soak-kept.toml" --root s3://bench/kept "${S3_OPTS[@]}" $(long "$MOTO_MINUTES") \
  "${MOTO[@]}"
python3 - "$WORK" <<'PY'
import json, sys
work = sys.argv[1]
MB = 1e6
for run in ("local-cleanup", "local-kept", "moto-cleanup", "moto-kept"):
    r = json.loads(open(f"{work}/{run}/results.jsonl").readline())
    assert r["verified"], (run, r.get("verify_error"))
    s, c = r["storage"], r["consistency"]
    offered = sum((f["rate"] or 0) * r["duration_secs"] for f in r["roles"])
    print(f"\n{run}: {r['duration_secs']} s, {r['total_operations']} operations of {offered:.0f} offered, verified")
    minute = [x for x in s["samples"] if round(x["t_s"]) % 60 == 0 or x is s["samples"][-1]]
    print("  stored: " + ", ".join(f"{x['t_s'] / 60:.0f} min {x['versions']} versions {x['bytes'] / MB:.1f} MB"
                                   for x in minute))
    p = s.get("projection")
    later = (f"${p['usd_per_month_after_30_days']['s3-standard']:.2f} a month after 30 days by the model "
             f"({p['after_30_days_versions']:,.0f} versions, {p['after_30_days_bytes'] / 1e9:,.1f} GB)"
             if p else "no projection (a cleanup removed versions)")
    print(f"  growth over the window {s['growth_bytes_per_hour'] / MB:,.0f} MB and "
          f"{s['growth_versions_per_hour']:,.0f} versions an hour; "
          f"S3 Standard storage ${s['usd_per_month']['s3-standard']:.4f} a month now, {later}")
    for f in r["roles"]:
        if f.get("cleaned"):
            k = f["cleaned"]
            usd = f["usd_per_million_ops"]["s3-standard"] / 1e6 if f.get("usd_per_million_ops") else float("nan")
            print(f"  cleanup: {f['total_operations']} runs, p50 {f['p50_latency_ms']:.0f} ms, max {f['max_latency_ms']:.0f} ms; "
                  f"removed {k['versions']} versions, {k['files']} files, {k['bytes'] / MB:.1f} MB; "
                  f"{f['requests_per_op']:.0f} requests and {f['read_bytes_per_op'] / MB:.1f} MB read a run, "
                  f"${usd:.5f} a run on S3 Standard")
        elif f.get("beside_cleanup"):
            b = f["beside_cleanup"]
            print(f"  {f['role']} {f['operation']}: p50/p99 {b['outside']['p50_ms']:.1f}/{b['outside']['p99_ms']:.1f} ms "
                  f"without a cleanup ({b['outside']['ops']} ops), {b['during']['p50_ms']:.1f}/{b['during']['p99_ms']:.1f} ms "
                  f"during one ({b['during']['ops']} ops)")
        else:
            print(f"  {f['role']} {f['operation']}: p50/p99 {f['p50_latency_ms']:.1f}/{f['p99_latency_ms']:.1f} ms "
                  f"({f['total_operations']} ops)")
        if f["errors"] or f["attempts"] != f["total_operations"]:
            print(f"    {f['attempts']} started, {f['total_operations']} succeeded; failed: {f['errors'] or 'none'}"
                  + (f"; the first: {f['first_error'][:300]}" if f.get("first_error") else ""))
    anomalies = sum(c[k] for k in ("stale_reads", "resurrections", "monotonic_violations",
                                   "read_your_writes_violations", "phantoms", "duplicates"))
    print(f"  checker: {c['reads']} reads of {c['creations']} creations, {anomalies} anomalies; "
          f"lag p50 {c['lag_p50_ms']:.0f} ms, max {c['lag_max_ms']:.0f} ms")
PY
echo
echo "The storage model, fitted on the first fifth of each kept run (2 minutes of 10), against its end:"
cargo build --quiet --release -p bench-core --example storage_model
model="${CARGO_TARGET_DIR:-target}/release/examples/storage_model"
"$model" "$WORK/local-kept/results.jsonl" $((MINUTES * 12))
"$model" "$WORK/moto-kept/results.jsonl" $((MOTO_MINUTES * 12))
cat "$WORK/times"
# The records, kept where KEEP names a folder.
[ -z "${KEEP:-}" ] || { mkdir -p "$KEEP" && for r in local-cleanup local-kept moto-cleanup moto-kept; do
  cp "$WORK/$r/results.jsonl" "$KEEP/$r.jsonl"; done; }
