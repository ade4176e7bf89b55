#!/usr/bin/env python3
"""How much the verdicts of `bench compare` and `bench ab` are worth on this machine.

    scripts/figures/noise.sh compare [PAIRS]           `bench compare` of separate runs, identical or not
    scripts/figures/noise.sh pairs [SIZES...]          `bench ab` per pairing, size and planted slowdown
    scripts/figures/noise.sh neighbour                 `bench ab` beside a periodic CPU neighbour
    scripts/figures/noise.sh trials [N] [ROWS]         N identical and N planted-5 % `bench ab` runs
    scripts/figures/noise.sh decide [N] [ROWS]         N identical and N planted-8 % runs of `bench ab
                                               --threshold 5` and no other option

Every `bench ab` here runs with `--threshold 5`; the pairs inside a cell (`alternate`, `duet`)
with runs of 50 commits (a concurrent cell of 2 writers for 3 s at 1,000 rows), a pilot of 5
runs and `--precision 2 --budget-secs 120`; the whole runs (`runs`) with 5 pairs of runs of
30 commits each. A planted slowdown is a
candidate that is this bench with BENCH_OP_DELAY_MS set to P % of the baseline's mean commit
latency, measured by an A/B of the binary against itself just before, under the same pairing:
"due" is the throughput ratio that delay gives against arm A's own latencies in the run
(mean / (mean + delay)); "seen" means the interval excludes 1; a verdict needs the whole
interval beyond ±5 %.

Needs a release build (cargo build --release); uses $BENCH, else the build in
$CARGO_TARGET_DIR or target/. Run it on a machine that does nothing else.
"""

import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time

from ablib import BENCH, ROOT, timed
from ablib import candidate as planted

WORK = tempfile.mkdtemp(prefix="bench-noise-")
STORE = os.path.join(WORK, "store")
THRESHOLD = "5"
PRECISION = ["--precision", "2", "--budget-secs", "120"]


def plan(name, rows, continuous_ops, concurrent=None, repetitions=1):
    """A plan file of one size, inline indices on."""
    text = f'name = "{name}"\n[matrix]\nsizes = [{rows}]\ninline = [true]\n'
    text += f"[continuous]\noperations = {continuous_ops}\n"
    if concurrent:
        text += f"[concurrent]\nconcurrency = [{concurrent[0]}]\nduration_secs = {concurrent[1]}\n"
    text += f"[run]\nrepetitions = {repetitions}\n"
    path = os.path.join(WORK, f"{name}.toml")
    with open(path, "w") as f:
        f.write(text)
    return path


def candidate(delay_ms):
    """This bench with a planted delay of busy CPU in every operation."""
    return planted(WORK, delay_ms)


ROW = re.compile(
    r"^(?P<cell>\S+)\s.*?(?P<ratio>[0-9.]+) \[(?P<lo>[0-9.]+)–(?P<hi>[0-9.]+)\].*?"
    r"(?P<pairs>\d+) (?P<pairing>lockstep|slices|duet|runs)\s+(?P<runs>\d+)\s+(?P<time>\S+)\s+"
    r"(?P<verdict>.*)$"
)


def ab(plan_path, cand, pairing, out):
    """One `bench ab`; returns its exit code and, per cell of the main table, what it said."""
    extra = PRECISION if pairing != "runs" else ["--no-extend"]
    cmd = [BENCH, "ab", plan_path, "--candidate", cand, "--out", out, "--root", STORE,
           "--pairing", pairing, "--threshold", THRESHOLD, "--fail-on-regression",
           "--progress", "lines"] + extra
    p = subprocess.run(cmd, capture_output=True, text=True)
    rows = {}
    for line in p.stdout.splitlines():
        if line.startswith("reads of mixed") or line.startswith("requests and bytes"):
            break
        m = ROW.match(line)
        if m:
            rows[m["cell"]] = m.groupdict()
    if p.returncode not in (0, 5):
        sys.stderr.write(p.stderr[-3000:])
        raise SystemExit(f"bench ab failed with {p.returncode}")
    return p.returncode, rows


def arm_latency(out, cell):
    """Arm A's mean commit latency in an A/B results directory."""
    v = [json.loads(l) for l in open(os.path.join(out, "results.jsonl"))]
    v = [r["avg_latency_ms"] for r in v if r["arm"] == "A" and r["bench_tag"] == cell]
    return sum(v) / len(v)


def due(out, cell, delay):
    a = arm_latency(out, cell)
    return a / (a + delay)


def verdict_word(v):
    """The verdict's first word: REGRESSION, improved, within noise, undecided, no verdict."""
    for w in ("REGRESSION", "improved", "undecided", "no verdict"):
        if v.startswith(w):
            return w
    return v


def decided(v):
    """A verdict of a change: REGRESSION or improved (not within noise, undecided)."""
    return v.startswith(("REGRESSION", "improved"))


HEADER = (f"{'rows':>7} {'cell':<6} {'pairing':<9} {'planted':>7} {'due':>6}  "
          f"{'B/A [95% CI]':<22} {'pairs':>6} {'runs':>4} {'time':>6}  seen  verdict")


def show(rows, kind, pairing, pct, d, r):
    # A latency's ratio is a throughput's only for one writer: no "due" for timed cells.
    d = d if kind == "cont" else None
    seen = "yes" if float(r["hi"]) < 1 or float(r["lo"]) > 1 else "no"
    ratio = f"{r['ratio']} [{r['lo']}–{r['hi']}]"
    dd = f"{d:.3f}" if d is not None else "-"
    print(f"{rows:>7} {kind:<6} {pairing:<9} {pct:>6}% {dd:>6}  {ratio:<22} {r['pairs']:>6} "
          f"{r['runs']:>4} {r['time']:>6}  {seen:<4}  {verdict_word(r['verdict'])}", flush=True)


def part_pairs(sizes):
    print("== bench ab: pairing x size x planted slowdown (--threshold 5) ==")
    print(HEADER)
    for rows in sizes:
        conc = (2, 3) if rows <= 1000 else None
        for pairing in ("alternate", "duet", "runs"):
            if pairing == "runs":
                p = plan(f"runs-{rows}", rows, 30, conc, repetitions=5)
            else:
                p = plan(f"in-{rows}", rows, 50, conc, repetitions=5)
            same = os.path.join(WORK, f"same-{pairing}-{rows}")
            _, res = ab(p, os.path.realpath(BENCH), pairing, same)
            for cell, r in sorted(res.items()):
                show(rows, cell.split("_")[0], pairing, 0, None, r)
            cont = f"cont_inline_true_rows_{rows}"
            base = arm_latency(same, cont)
            for pct in (2, 5, 8):
                delay = round(base * pct / 100, 3)
                out = os.path.join(WORK, f"p{pct}-{pairing}-{rows}")
                _, res = ab(p, candidate(delay), pairing, out)
                for cell, r in sorted(res.items()):
                    show(rows, cell.split("_")[0], pairing, pct, due(out, cell, delay), r)


def neighbour():
    return subprocess.Popen([os.path.join(ROOT, "scripts", "figures", "neighbour.sh"), "2.5", "2.5"])


def part_neighbour():
    print("== bench ab, continuous cells, planted 8 %, --threshold 5 --fail-on-regression "
          "--precision 2 --budget-secs 120 ==")
    print(f"{'rows':>7} {'beside':<10} {'planted':>7} {'due':>6}  {'B/A [95% CI]':<22} "
          f"{'pairs':>6} {'runs':>4} {'time':>6}  exit  verdict")
    for rows, busy in ((1000, False), (10000, True)):
        p = plan(f"nb-{rows}", rows, 50, None, repetitions=5)
        n = neighbour() if busy else None
        try:
            same = os.path.join(WORK, f"nb-same-{rows}-{busy}")
            code, res = ab(p, os.path.realpath(BENCH), "alternate", same)
            cell = f"cont_inline_true_rows_{rows}"
            r = res[cell]
            where = "neighbour" if busy else "idle"
            print(f"{rows:>7} {where:<10} {0:>6}% {'-':>6}  "
                  f"{r['ratio']} [{r['lo']}–{r['hi']}]".ljust(44)
                  + f" {r['pairs']:>6} {r['runs']:>4} {r['time']:>6}  {code:>4}  "
                  f"{verdict_word(r['verdict'])}", flush=True)
            delay = round(arm_latency(same, cell) * 0.08, 3)
            out = os.path.join(WORK, f"nb-p8-{rows}-{busy}")
            code, res = ab(p, candidate(delay), "alternate", out)
            r = res[cell]
            d = due(out, cell, delay)
            print(f"{rows:>7} {where:<10} {8:>6}% {d:>6.3f}  "
                  f"{r['ratio']} [{r['lo']}–{r['hi']}]".ljust(44)
                  + f" {r['pairs']:>6} {r['runs']:>4} {r['time']:>6}  {code:>4}  "
                  f"{verdict_word(r['verdict'])}", flush=True)
        finally:
            if n:
                n.kill()
                n.wait()


def part_trials(n, rows):
    print(f"== {n} identical and {n} planted-5 % bench ab runs, {rows} rows, alternate "
          f"(lockstep), --precision 2 ==")
    p = plan(f"tr-{rows}", rows, 50, None, repetitions=5)
    cell = f"cont_inline_true_rows_{rows}"
    seen_same = verdict_same = seen_five = contained = 0
    for i in range(n):
        same = os.path.join(WORK, f"tr-same-{i}")
        _, res = ab(p, os.path.realpath(BENCH), "alternate", same)
        r = res[cell]
        seen_same += float(r["hi"]) < 1 or float(r["lo"]) > 1
        verdict_same += decided(r["verdict"])
        delay = round(arm_latency(same, cell) * 0.05, 3)
        out = os.path.join(WORK, f"tr-p5-{i}")
        _, res2 = ab(p, candidate(delay), "alternate", out)
        r2 = res2[cell]
        d = due(out, cell, delay)
        seen_five += float(r2["hi"]) < 1
        contained += float(r2["lo"]) <= d <= float(r2["hi"])
        print(f"run {i + 1}: same {r['ratio']} [{r['lo']}–{r['hi']}] {verdict_word(r['verdict'])}; "
              f"5 % (due {d:.3f}) {r2['ratio']} [{r2['lo']}–{r2['hi']}] {r2['pairs']} pairs, "
              f"{r2['runs']} runs, {r2['time']}", flush=True)
    print(f"identical builds: {seen_same}/{n} intervals exclude 1, {verdict_same}/{n} verdicts; "
          f"planted 5 %: seen in {seen_five}/{n}, due ratio inside the interval in {contained}/{n}")


def ab_default(plan_path, cand, out):
    """`bench ab PLAN --candidate CAND --threshold 5`, nothing else (but where it writes):
    each cell runs until its interval decides at ±5 % or its budget (120 s) ends. Returns
    the row of the main table and the seconds it took."""
    cmd = [BENCH, "ab", plan_path, "--candidate", cand, "--threshold", THRESHOLD,
           "--out", out, "--root", STORE, "--progress", "lines"]
    began = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True)
    took = time.monotonic() - began
    if p.returncode != 0:
        sys.stderr.write(p.stderr[-3000:])
        raise SystemExit(f"bench ab failed with {p.returncode}")
    for line in p.stdout.splitlines():
        m = ROW.match(line)
        if m:
            return m.groupdict(), took
    raise SystemExit(f"no row in:\n{p.stdout}")


def part_decide(n, rows):
    print(f"== {n} identical and {n} planted-8 % runs of `bench ab --threshold 5` (no other "
          f"option), {rows} rows, 60 commits a run, 5 repetitions a cell ==")
    p = plan(f"de-{rows}", rows, 60, None, repetitions=5)
    cell = f"cont_inline_true_rows_{rows}"
    same_verdicts = caught = 0
    words = {"same": [], "planted": []}
    times = {"same": [], "planted": []}
    runs = {"same": [], "planted": []}
    # The planted delay is 8 % of the baseline's commit latency: the median over a first
    # A/B of the binary against itself and every identical run so far (one run alone can
    # be a few % off).
    first = os.path.join(WORK, "de-calibration")
    subprocess.run([BENCH, "ab", p, "--candidate", os.path.realpath(BENCH), "--no-extend",
                    "--out", first, "--root", STORE, "--progress", "lines"],
                   capture_output=True, check=True)
    latencies = [arm_latency(first, cell)]
    for i in range(n):
        same = os.path.join(WORK, f"de-same-{i}")
        r, t = ab_default(p, os.path.realpath(BENCH), same)
        same_verdicts += decided(r["verdict"])
        words["same"].append(verdict_word(r["verdict"]))
        times["same"].append(t)
        runs["same"].append(int(r["runs"]))
        latencies.append(arm_latency(same, cell))
        delay = round(sorted(latencies)[len(latencies) // 2] * 0.08, 3)
        out = os.path.join(WORK, f"de-p8-{i}")
        r2, t2 = ab_default(p, candidate(delay), out)
        caught += r2["verdict"].startswith("REGRESSION")
        words["planted"].append(verdict_word(r2["verdict"]))
        times["planted"].append(t2)
        runs["planted"].append(int(r2["runs"]))
        print(f"run {i + 1}: same {r['ratio']} [{r['lo']}–{r['hi']}] {verdict_word(r['verdict'])}"
              f" ({r['runs']} runs, {t:.0f} s); 8 % (due {due(out, cell, delay):.3f}) "
              f"{r2['ratio']} [{r2['lo']}–{r2['hi']}] {verdict_word(r2['verdict'])} "
              f"({r2['runs']} runs, {t2:.0f} s)", flush=True)

    def spread(v):
        v = sorted(v)
        return f"median {v[len(v) // 2]:.0f}, {v[0]:.0f}–{v[-1]:.0f}"
    def tally(v):
        return ", ".join(f"{w} {v.count(w)}" for w in sorted(set(v)))
    print(f"identical builds: {same_verdicts}/{n} verdicts ({tally(words['same'])}; runs "
          f"{spread(runs['same'])}; seconds {spread(times['same'])}); planted 8 %: REGRESSION "
          f"in {caught}/{n} ({tally(words['planted'])}; runs {spread(runs['planted'])}; seconds "
          f"{spread(times['planted'])})")


def part_compare(pairs):
    print(f"== bench compare of separate sequential runs ({pairs} identical pairs at 3 and at 5 "
          "repetitions, then a planted 25 ms slowdown) ==")
    spreads = []
    compared = {3: [], 5: []}

    def verdicts(a, b, between=None):
        extra = [] if between is None else ["--between-runs", str(between)]
        c = subprocess.run([BENCH, "compare", a, b, *extra], capture_output=True,
                           text=True).stdout
        main = c.split("requests and bytes")[0].split("reads of mixed")[0]
        rows = [l for l in main.splitlines() if re.match(r"^(cont|conc)_", l)]
        flagged = [l for l in rows if "REGRESSION" in l or "improved" in l]
        return len(rows), flagged

    for reps in (3, 5):
        p = os.path.join(WORK, f"panel-{reps}.toml")
        with open(p, "w") as f:
            f.write('name = "noise"\n[matrix]\nsizes = [1000, 10000]\ninline = [true, false]\n'
                    '[continuous]\noperations = 30\n[concurrent]\nconcurrency = [2]\n'
                    f'duration_secs = 3\n[run]\nrepetitions = {reps}\n')

        def run(out, env=None):
            subprocess.run([BENCH, "run", p, "--out", out, "--root", STORE, "--progress",
                            "lines"], check=True, capture_output=True,
                           env=dict(os.environ, **(env or {})))

        for i in range(pairs):
            outs = [os.path.join(WORK, f"id-{reps}-{i}-{side}") for side in "ab"]
            for o in outs:
                run(o)
            compared[reps].append(outs)
            n, flagged = verdicts(*outs)
            sums = [{r.split(",")[21]: r.split(",") for r in open(os.path.join(o, "summary.csv"))}
                    for o in outs]
            for tag, ra in sums[0].items():
                rb = sums[1].get(tag)
                if tag != "bench_tag" and rb:
                    # tps, p50_ms: columns 8 and 10
                    spreads += [abs(math.log(float(rb[k]) / float(ra[k]))) for k in (8, 10)
                                if float(ra[k]) > 0 and float(rb[k]) > 0]
            print(f"{reps} repetitions, pair {i + 1}: {len(flagged)} of {n} cells with a verdict",
                  flush=True)
            for line in flagged:
                cols = line.split()
                print(f"    {cols[0]}: {line[line.index('[') - 6:line.index(']') + 1].strip()} "
                      f"... {line[line.rindex('  ') + 2:]}", flush=True)
        slow = os.path.join(WORK, f"slow-{reps}")
        run(slow, {"BENCH_OP_DELAY_MS": "25"})
        compared[reps].append([compared[reps][0][0], slow])
    spreads.sort()
    q = spreads[min(len(spreads) - 1, int(0.95 * len(spreads)))]
    q_pct = 100 * (math.exp(q) - 1)
    print(f"spread between identical runs (throughput and p50 medians, {len(spreads)} ratios): "
          f"95th percentile ±{q_pct:.0f} %, largest ±{100 * (math.exp(spreads[-1]) - 1):.0f} %")
    floors = sorted({None, round(q_pct)}, key=lambda f: -1 if f is None else f)
    for floor in floors:
        name = "the default" if floor is None else f"--between-runs {floor}"
        for reps in (3, 5):
            *same, planted = compared[reps]
            results = [verdicts(a, b, floor) for a, b in same]
            n = sum(r[0] for r in results)
            f = sum(len(r[1]) for r in results)
            pn, pf = verdicts(*planted, floor)
            print(f"{name}, {reps} repetitions: false alarms {f}/{n} cells "
                  f"({100 * f / n:.1f} %); planted 25 ms: {len(pf)} of {pn} cells with a "
                  "verdict", flush=True)


def main():
    if not os.access(BENCH, os.X_OK):
        raise SystemExit("build first: cargo build --release")
    args = sys.argv[1:] or ["pairs"]
    part, rest = args[0], args[1:]
    parts = {
        "pairs": lambda: part_pairs([int(x) for x in rest] or [1000, 10000, 100000]),
        "neighbour": part_neighbour,
        "trials": lambda: part_trials(int(rest[0]) if rest else 10,
                                      int(rest[1]) if len(rest) > 1 else 1000),
        "decide": lambda: part_decide(int(rest[0]) if rest else 10,
                                      int(rest[1]) if len(rest) > 1 else 1000),
        "compare": lambda: part_compare(int(rest[0]) if rest else 3),
    }
    if part not in parts:
        raise SystemExit(__doc__)
    timed(WORK, parts[part])


if __name__ == "__main__":
    main()
