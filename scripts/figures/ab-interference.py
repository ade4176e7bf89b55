#!/usr/bin/env python3
"""`bench ab` beside a CPU neighbour: what its verdicts are worth, and why.

    scripts/figures/ab-interference.sh cause [TRIALS]
        TRIALS runs of `bench ab --threshold 1` beside a neighbour busy 2.5 s and idle 2.5 s
        (one thread), against the same binary and against a candidate that plants 2 % of
        the baseline's commit latency, each with arm A started first in every run
        (BENCH_AB_START_A_FIRST=1, the lead alone alternating) and as bench ab runs them
        (crossovers: the first arm alternating); for every run, each arm's CPU (where its
        worker's threads ran, the share of their time they waited for a CPU), the
        neighbour's phase, the arm started first and the run's own ratio B/A; then what the
        identical builds' runs followed.
    scripts/figures/ab-interference.sh figure [TRIALS] [ROWS:PLANTED[:TRIALS]...]
        TRIALS (default 20) runs of `bench ab --threshold 1` per condition — idle, and beside
        neighbours of periods 0.5, 2.5 and 10 s on one thread and on every core — for each
        ROWS:PLANTED (default 1000:8 1000:0 10000:8 1000:2: a candidate planting PLANTED % of
        the baseline's commit latency at ROWS rows; 0 is the same binary), in that order:
        how often each verdict came, the wrong ones, and the time to decide; each trial's
        verdict on stderr.

THRESHOLD (default 1) is `--threshold`; CONDITIONS (e.g. 'idle;10 s, all cores', parts of
the labels, `;`-separated) the conditions `figure` runs. FIGURE_LOG (a JSON Lines file) keeps
`figure`'s trials, one a line (verdict, runs, seconds, arm A's latency, the due ratio, the
interference note, the build's digest): trials already in it count toward TRIALS, only the
missing ones run, and the table tallies them all, so a figure of many trials can be taken
in parts (docs/data/ab-interference-trials.jsonl holds those docs/results.md quotes).

The cell: a continuous cell of 60 `write-create-namespace` commits, inline indices off,
5 repetitions, run until decided at ±THRESHOLD % or its 120 s budget.
A planted slowdown is a candidate that is this bench with BENCH_OP_DELAY_MS set to P % of the
baseline's mean commit latency, measured by an A/B of the binary against itself first.

Needs a release build (cargo build --release); uses $BENCH, else the build in
$CARGO_TARGET_DIR or target/. Run it on a machine that does nothing else.
"""

import json
import math
import os
import subprocess
import sys
import tempfile
import time
from datetime import datetime

from ablib import BENCH, ROOT, timed
from ablib import candidate as planted

WORK = tempfile.mkdtemp(prefix="bench-interference-")
STORE = os.path.join(WORK, "store")
THRESHOLD = os.environ.get("THRESHOLD", "1")
NEIGHBOUR = os.path.join(ROOT, "scripts", "figures", "neighbour.sh")


def plan(rows):
    path = os.path.join(WORK, f"plan-{rows}.toml")
    with open(path, "w") as f:
        f.write(f'name = "interference-{rows}"\n[matrix]\nsizes = [{rows}]\ninline = [false]\n'
                '[continuous]\noperations = 60\n[run]\nrepetitions = 5\n')
    return path


def cell(rows):
    return f"cont_inline_false_rows_{rows}"


def candidate(delay_ms):
    """This bench with a planted delay of busy CPU in every operation."""
    return planted(WORK, delay_ms)


def ab(plan_path, cand, out, env=None):
    """One `bench ab` until decided at ±THRESHOLD %: (exit code, seconds, its JSON answer)."""
    cmd = [BENCH, "ab", plan_path, "--candidate", cand, "--out", out, "--root", STORE,
           "--threshold", THRESHOLD, "--fail-on-regression", "--format", "json",
           "--progress", "lines"]
    began = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, **(env or {})))
    took = time.monotonic() - began
    if p.returncode not in (0, 5):
        sys.stderr.write(p.stderr[-3000:])
        raise SystemExit(f"bench ab failed with {p.returncode}")
    return p.returncode, took, json.loads(p.stdout)


def records(out):
    return [json.loads(line) for line in open(os.path.join(out, "results.jsonl"))]


def mean_latency(out, tag):
    v = [r["avg_latency_ms"] for r in records(out) if r["arm"] == "A" and r["bench_tag"] == tag]
    return sum(v) / len(v)


def unix(ts):
    return datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp()


class Neighbour:
    """scripts/figures/neighbour.sh in the background, its phases logged."""

    def __init__(self, period, threads):
        self.log = os.path.join(WORK, f"phases-{period}-{threads}-{time.monotonic_ns()}")
        half = str(period / 2)
        self.p = subprocess.Popen([NEIGHBOUR, half, half, str(threads), self.log])

    def stop(self):
        self.p.terminate()
        self.p.wait()

    def busy_share(self, start, end):
        """The share of [start, end] (unix seconds) the neighbour was busy."""
        try:
            marks = [(float(t), w) for t, w in (line.split() for line in open(self.log))]
        except FileNotFoundError:
            return None
        busy = 0.0
        for (t0, w), (t1, _) in zip(marks, marks[1:] + [(end, None)]):
            lo, hi = max(t0, start), min(t1, end)
            if w == "busy" and hi > lo:
                busy += hi - lo
        return busy / (end - start) if end > start else None


def verdict_of(answer, tag):
    for row in answer.get("cells", []):
        if row.get("cell") == tag:
            return row
    raise SystemExit(f"no row of {tag} in {json.dumps(answer)[:2000]}")


def word(verdict):
    for w in ("REGRESSION", "improved", "undecided", "within noise"):
        if verdict.startswith(w):
            return w
    return verdict.split(" (")[0]


def where(cpu):
    """`cpu1 83 %, waited 4.1 %` of a record's worker_cpu."""
    if not cpu:
        return "-"
    by = cpu.get("by_cpu_ms") or []
    total = sum(by)
    main = max(range(len(by)), key=lambda i: by[i]) if by else None
    share = by[main] / total if total else 0
    wanted = cpu["busy_ms"] + cpu["wait_ms"]
    wait = cpu["wait_ms"] / wanted if wanted else 0
    return f"cpu{main} {100 * share:3.0f} %, waited {100 * wait:4.1f} %"


def run_ratio(ra, rb):
    """A run's own ratio B/A of throughput: A's summed unit time over B's, pairs alike."""
    ua, ub = ra["paired"], rb["paired"]
    n = min(len(ua["unit_ms"]), len(ub["unit_ms"]))
    ok = [i for i in range(n) if ua["unit_ops"][i] and ub["unit_ops"][i]]
    return sum(ua["unit_ms"][i] for i in ok) / sum(ub["unit_ms"][i] for i in ok)


def per_run(out, tag, neighbour):
    """One line per run of the cell: lead, the neighbour's busy share, each arm's CPU."""
    recs = [r for r in records(out) if r["bench_tag"] == tag]
    by_rep = {}
    for r in recs:
        by_rep.setdefault(r["repetition"], {})[r["arm"]] = r
    lines, rows = [], []
    for rep in sorted(by_rep):
        pair = by_rep[rep]
        if set(pair) != {"A", "B"}:
            continue
        ra, rb = pair["A"], pair["B"]
        start, end = unix(ra["started_at"]), unix(ra["finished_at"])
        busy = neighbour.busy_share(start, end) if neighbour else None
        ratio = run_ratio(ra, rb)
        lead = "A" if rep % 2 == 1 else "B"
        started = "A" if ra["paired"].get("first") else "B"
        ca, cb = ra.get("worker_cpu") or {}, rb.get("worker_cpu") or {}
        rows.append({"rep": rep, "lead": lead, "started": started, "busy": busy,
                     "ratio": ratio, "a": ca, "b": cb})
        b = "-" if busy is None else f"{100 * busy:3.0f} %"
        lines.append(f"    run {rep:>3}  lead {lead}  started first {started}  neighbour busy "
                     f"{b:>5}  A {where(ca):<28} B {where(cb):<28} B/A {ratio:.3f}")
    return lines, rows


def main_cpu(cpu):
    by = cpu.get("by_cpu_ms") or []
    return max(range(len(by)), key=lambda i: by[i]) if by else None


def wait_share(cpu):
    wanted = cpu.get("busy_ms", 0) + cpu.get("wait_ms", 0)
    return cpu.get("wait_ms", 0) / wanted if wanted else 0


def geo(v):
    return math.exp(sum(math.log(x) for x in v) / len(v)) if v else float("nan")


def sd(v):
    if len(v) < 2:
        return float("nan")
    m = sum(v) / len(v)
    return math.sqrt(sum((x - m) ** 2 for x in v) / (len(v) - 1))


def corr(pairs):
    """Pearson's correlation of (x, y) pairs; nan with fewer than 3."""
    if len(pairs) < 3:
        return float("nan")
    xs, ys = zip(*pairs)
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    sxy = sum((x - mx) * (y - my) for x, y in pairs)
    sxx = sum((x - mx) ** 2 for x in xs)
    syy = sum((y - my) ** 2 for y in ys)
    return sxy / math.sqrt(sxx * syy) if sxx and syy else float("nan")


def summarise(trials):
    """What the runs' own ratios followed, over `trials` (each its runs in order): their
    spread in the neighbour's idle and busy phases, how consecutive runs and crossovers
    correlate, the arm started first, the arms' CPUs and waits."""
    rows = [r for t in trials for r in t]
    if not rows:
        return
    log = lambda r: math.log(r["ratio"])  # noqa: E731
    idle = [log(r) for r in rows if r["busy"] is not None and r["busy"] < 0.1]
    busy = [log(r) for r in rows if r["busy"] is not None and r["busy"] > 0.9]
    # Consecutive runs both mostly in a busy phase; consecutive crossovers (runs 2j-1, 2j).
    lag_runs, lag_blocks = [], []
    for t in trials:
        lag_runs += [(log(x), log(y)) for x, y in zip(t, t[1:])
                     if x["busy"] and y["busy"] and x["busy"] > 0.5 and y["busy"] > 0.5]
        blocks = [(log(x) + log(y)) / 2 for x, y in zip(t, t[1:])
                  if x["rep"] % 2 == 1 and y["rep"] == x["rep"] + 1]
        lag_blocks += list(zip(blocks, blocks[1:]))
    by_start = {k: [r["ratio"] for r in rows if r["started"] == k] for k in "AB"}
    same = [r["ratio"] for r in rows if main_cpu(r["a"]) == main_cpu(r["b"])]
    diff = [r["ratio"] for r in rows if main_cpu(r["a"]) != main_cpu(r["b"])]
    waits = [(wait_share(r["a"]) - wait_share(r["b"]), log(r)) for r in rows]
    print(f"  runs: {len(rows)}; B/A geometric mean {geo([r['ratio'] for r in rows]):.3f}; "
          f"B faster in {sum(r['ratio'] > 1 for r in rows)}")
    print(f"  a run's log ratio spreads by (sd) {sd(idle):.3f} in the neighbour's idle phases "
          f"({len(idle)} runs), {sd(busy):.3f} in its busy ones ({len(busy)})")
    print(f"  lag-1 correlation of consecutive runs' log ratios, both mostly busy: "
          f"{corr(lag_runs):+.2f} ({len(lag_runs)} pairs); of consecutive crossovers: "
          f"{corr(lag_blocks):+.2f} ({len(lag_blocks)} pairs)")
    print(f"  by the arm started first: A {geo(by_start['A']):.3f} ({len(by_start['A'])} runs), "
          f"B {geo(by_start['B']):.3f} ({len(by_start['B'])})")
    print(f"  arms mostly on the same CPU {geo(same):.3f} ({len(same)} runs), on different "
          f"ones {geo(diff):.3f} ({len(diff)})")
    print(f"  correlation of a run's log ratio with how much longer A's workers waited for a "
          f"CPU than B's (share of their time): {corr(waits):+.2f}")


def calibrate(rows, period=None, threads=None):
    """The baseline's mean commit latency at `rows` beside the neighbour of `period` (none:
    idle): an A/B of the binary against itself, 20 runs, under the same neighbour, so that a
    planted P % is P % of what the cell's commits take there."""
    out = os.path.join(WORK, f"calibration-{rows}-{period}-{threads}")
    n = Neighbour(period, threads) if period else None
    try:
        subprocess.run([BENCH, "ab", plan(rows), "--candidate", os.path.realpath(BENCH),
                        "--no-extend", "--out", out, "--root", STORE, "--progress", "lines",
                        "--set", "run.repetitions=20"],
                       capture_output=True, check=True)
    finally:
        if n:
            n.stop()
    return mean_latency(out, cell(rows))


def part_cause(trials):
    rows = 1000
    base = calibrate(rows, 5.0, 1)
    delay = round(base * 0.02, 3)
    print(f"== cause: bench ab --threshold {THRESHOLD} beside a neighbour (2.5 s busy, 2.5 s "
          f"idle, one thread); {rows} rows, 60 commits a run; planted 2 % = {delay} ms on "
          f"{base:.2f} ms; each with arm A started first in every run "
          f"(BENCH_AB_START_A_FIRST=1) and with the first arm alternating (crossovers) ==",
          flush=True)
    orders = (("A started first", {"BENCH_AB_START_A_FIRST": "1"}), ("crossovers", {}))
    same = {name: [] for name, _ in orders}
    for i in range(trials):
        for order, env in orders:
            for name, cand in (("same", os.path.realpath(BENCH)), ("2 %", candidate(delay))):
                n = Neighbour(5.0, 1)
                try:
                    out = os.path.join(WORK, f"cause-{i}-{order[0]}-{name.replace(' %', '')}")
                    code, took, answer = ab(plan(rows), cand, out, env=env)
                    lines, runs = per_run(out, cell(rows), n)
                finally:
                    n.stop()
                row = verdict_of(answer, cell(rows))
                print(f"trial {i + 1}, {order}, {name}: {row['verdict']} ({len(runs)} runs, "
                      f"{took:.0f} s, exit {code})", flush=True)
                for line in lines:
                    print(line)
                if name == "same":
                    same[order].append(runs)
    for order, _ in orders:
        print(f"== the runs of identical builds, {order} ==")
        summarise(same[order])


CONDITIONS = [("idle", None, None)] + [
    (f"{period:g} s, {'1 thread' if threads == 1 else 'all cores'}", period, threads)
    for threads in (1, "all") for period in (0.5, 2.5, 10.0)
]


def chosen(label):
    """CONDITIONS='idle;2.5 s, 1 thread' (labels, or parts of them) runs only those."""
    want = [w.strip() for w in os.environ.get("CONDITIONS", "").split(";") if w.strip()]
    return not want or any(w in label for w in want)


def digest(path):
    """The first 16 hex digits of the SHA-256 of the build (records' `build_digest`)."""
    import hashlib
    with open(os.path.realpath(path), "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()[:16]


def logged(rows, pct, label):
    """The trials of (rows, planted %, condition) at THRESHOLD already in FIGURE_LOG."""
    path = os.environ.get("FIGURE_LOG")
    if not path or not os.path.exists(path):
        return []
    with open(path) as f:
        trials = [json.loads(line) for line in f if line.strip()]
    return [t for t in trials if (t["rows"], t["planted_pct"], t["beside"], t["threshold"])
            == (rows, pct, label, THRESHOLD)]


def log(trial):
    path = os.environ.get("FIGURE_LOG")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(trial) + "\n")


def trial(rows, pct, label, period, threads, cand, delay, i):
    """One `bench ab` of the figure beside its neighbour: what it said, as FIGURE_LOG keeps it."""
    n = Neighbour(period, threads) if period else None
    try:
        out = os.path.join(WORK, f"fig-{rows}-{period}-{threads}-{pct}-{i}")
        _, took, answer = ab(plan(rows), cand, out)
    finally:
        if n:
            n.stop()
    row = verdict_of(answer, cell(rows))
    a = mean_latency(out, cell(rows))
    notes = [x["note"] for x in answer.get("interference", [])]
    subprocess.run(["rm", "-rf", out])
    return {"rows": rows, "planted_pct": pct, "beside": label, "threshold": THRESHOLD,
            "verdict": row["verdict"], "word": word(row["verdict"]),
            "runs": (row.get("pairs") or {}).get("runs"), "secs": round(took, 1),
            "a_ms": round(a, 3), "due": round(a / (a + delay), 4) if pct else None,
            "note": notes[0] if notes else None, "build": digest(BENCH)}


def part_figure(groups):
    """`groups`: (rows, planted %, trials) in the order they run, each beside every
    condition. With FIGURE_LOG, trials already there count, only the missing ones run, and
    each new one is appended: a figure of many trials can be taken in parts."""
    print(f"== bench ab --threshold {THRESHOLD} (until decided, budget 120 s), continuous "
          f"cell of 60 commits; due: the median over trials of the throughput ratio the "
          "planted delay gives against arm A's mean latency ==")
    print(f"{'rows':>6}  {'beside':<20} {'planted':>7} {'due':>6}  {'trials':>6}  {'REGRESSION':>10} "
          f"{'improved':>8} {'within':>6} {'undecided':>9}  {'wrong':>5}  "
          "decided in (median, max)", flush=True)
    bases = {}
    builds = set()
    for rows, pct, trials in groups:
        for label, period, threads in filter(lambda c: chosen(c[0]), CONDITIONS):
            done = logged(rows, pct, label)
            if len(done) < trials and (rows, period, threads) not in bases:
                bases[(rows, period, threads)] = calibrate(rows, period, threads)
            for i in range(len(done), trials):
                delay = round(bases[(rows, period, threads)] * pct / 100, 3)
                cand = os.path.realpath(BENCH) if pct == 0 else candidate(delay)
                t = trial(rows, pct, label, period, threads, cand, delay, i)
                log(t)
                done.append(t)
                # Each trial on stderr: what it said, after how many runs and seconds.
                sys.stderr.write(f"{rows} {label} {pct}% trial {i + 1}: {t['verdict']} "
                                 f"({t['runs']} runs, {t['secs']:.0f} s; A {t['a_ms']:.2f} ms)"
                                 f"{' | ' + t['note'] if t['note'] else ''}\n")
            builds |= {t.get("build") for t in done}
            counts = {"REGRESSION": 0, "improved": 0, "within noise": 0, "undecided": 0}
            for t in done:
                counts[t["word"]] = counts.get(t["word"], 0) + 1
            # Wrong: a verdict for identical builds (they are within ±THRESHOLD: a change
            # beyond it is wrong); for a slowdown, "improved", and "within noise" where the
            # slowdown lies beyond the threshold.
            wrong = counts["improved"] + (counts["REGRESSION"] if pct == 0 else 0)
            if pct > float(THRESHOLD):
                wrong += counts["within noise"]
            times = sorted(t["secs"] for t in done if t["word"] != "undecided")
            dues = sorted(t["due"] for t in done if t.get("due"))
            ts = (f"{times[len(times) // 2]:.0f} s, {times[-1]:.0f} s" if times else "-")
            due = f"{dues[len(dues) // 2]:.3f}" if dues else "-"
            print(f"{rows:>6}  {label:<20} {pct:>6}% {due:>6}  {len(done):>6}  "
                  f"{counts['REGRESSION']:>10} {counts['improved']:>8} "
                  f"{counts['within noise']:>6} {counts['undecided']:>9}  {wrong:>5}  {ts}",
                  flush=True)
    if len(builds - {None}) > 1:
        print(f"(trials of {len(builds - {None})} builds of bench, by FIGURE_LOG)")


def main():
    if not os.access(BENCH, os.X_OK):
        raise SystemExit("build first: cargo build --release")
    args = sys.argv[1:] or ["cause"]
    part, rest = args[0], args[1:]
    if part == "cause":
        timed(WORK, lambda: part_cause(int(rest[0]) if rest else 3))
    elif part == "figure":
        trials = int(rest[0]) if rest else 20
        groups = [[int(x) for x in g.split(":")] for g in rest[1:]]
        groups = [(g[0], g[1], g[2] if len(g) > 2 else trials) for g in groups]
        groups = groups or [(1000, 8, trials), (1000, 0, trials), (10000, 8, trials),
                            (1000, 2, trials)]
        timed(WORK, lambda: part_figure(groups))
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main()
