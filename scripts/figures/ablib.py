"""What the figure scripts of `bench ab` share (noise.py, ab-interference.py): where the
release build is, and a candidate that is this bench with a planted slowdown."""

import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BENCH = os.environ.get("BENCH") or os.path.join(
    os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target")), "release", "bench"
)


def candidate(work, delay_ms):
    """A wrapper in `work` that runs this bench with BENCH_OP_DELAY_MS=`delay_ms`: busy CPU
    planted in every operation."""
    path = os.path.join(work, f"cand-{delay_ms}.sh")
    with open(path, "w") as f:
        f.write(f'#!/bin/sh\nBENCH_OP_DELAY_MS={delay_ms} exec {os.path.realpath(BENCH)} "$@"\n')
    os.chmod(path, 0o755)
    return path


def timed(work, part):
    """Run `part` (a function of no arguments), remove `work` however it ends, and print the
    time it all took."""
    import subprocess
    import time

    started = time.monotonic()
    try:
        part()
    finally:
        subprocess.run(["rm", "-rf", work])
    print(f"({time.monotonic() - started:.0f} s in all)")
