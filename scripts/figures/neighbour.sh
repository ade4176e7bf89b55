#!/usr/bin/env bash
# A periodic CPU neighbour, as a build or a noisy VM next door: THREADS cores busy for BUSY
# seconds, then idle for IDLE seconds, over and over, until killed.
#
#   scripts/figures/neighbour.sh [BUSY] [IDLE] [THREADS] [LOG]
#
# Defaults: 2.5 2.5 1. THREADS may be `all` (one busy process per core). With LOG, each
# phase is appended to it as it begins: `<unix seconds> busy|idle`, so that a script can
# say which phase a run of `bench ab` met.
#
# Used by scripts/figures/noise.sh and scripts/figures/ab-interference.sh to measure verdicts
# beside a neighbour; start it in the background and kill it by its pid
# (`scripts/figures/neighbour.sh & pid=$!; ...; kill $pid`): its busy processes end with it.
set -euo pipefail
BUSY=${1:-2.5}
IDLE=${2:-2.5}
THREADS=${3:-1}
LOG=${4:-}
[ "$THREADS" = all ] && THREADS=$(nproc)
exec python3 - "$BUSY" "$IDLE" "$THREADS" "$LOG" <<'PY'
import os, signal, sys, time
busy, idle, n, log = float(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
t0 = time.monotonic()
parent = os.getpid()

def phase(now):
    """The phase under way at `now` and when it ends, on one schedule for every process."""
    k, into = divmod(now - t0, busy + idle)
    start = t0 + k * (busy + idle)
    return ("busy", start + busy) if into < busy else ("idle", start + busy + idle)

# One busy process per thread asked for, each on the same schedule; each ends with the parent.
children = []
for _ in range(n):
    pid = os.fork()
    if pid == 0:
        x = 0
        while os.getppid() == parent:
            what, until = phase(time.monotonic())
            if what == "busy":
                while time.monotonic() < until:
                    x += 1
            else:
                time.sleep(max(0.0, until - time.monotonic()))
        os._exit(0)
    children.append(pid)

def stop(*_):
    for c in children:
        try:
            os.kill(c, signal.SIGKILL)
        except ProcessLookupError:
            pass
    os._exit(0)

signal.signal(signal.SIGTERM, stop)
signal.signal(signal.SIGINT, stop)
while True:
    what, until = phase(time.monotonic())
    if log:
        with open(log, "a") as f:
            f.write(f"{time.time():.3f} {what}\n")
    time.sleep(max(0.0, until - time.monotonic()) + 0.0005)
PY
