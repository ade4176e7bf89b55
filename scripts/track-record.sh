#!/usr/bin/env bash
# lance's own catalog bugs, reproduced on the releases that had them (docs/track-record.md).
#
#   scripts/track-record.sh build VERSION   bench built against lance VERSION (e.g. 10.0.0):
#                                           a copy of this tree with lance's pins changed;
#                                           prints the binary's path
#   scripts/track-record.sh build 14.0.2+fix  this tree with lance-namespace-impls 14.0.2
#                                           patched by docs/findings/patches/*.patch, its
#                                           lance-style tests run (they expect the fixes);
#                                           FIX_TARGET: cargo's target (default the
#                                           releases' shared one; this tree's own, e.g.
#                                           $CARGO_TARGET_DIR, builds it in minutes)
#   scripts/track-record.sh run BUG [BUILD...]  the bug's plan, end to end, with bench
#                                           built against each release its row names red
#                                           (from the first red one) and green (the one
#                                           before it, the one that fixed it, a patched
#                                           build), and this tree's lance; a line per build
#                                           and cell, RED or GREEN. BUILDs: only those
#                                           (`this`: this tree's bench)
#   scripts/track-record.sh list            the bugs, their plans and releases
#
# A build takes 40 to 60 minutes on a 2-core machine (lance from cold, once per release;
# later builds of the same release reuse it, and releases share the dependencies they have
# in common). Builds live under $TRACK_RECORD_DIR (default ~/.cache/track-record):
# src-VERSION (the copy), target (cargo's, shared) and bench-VERSION (the binary). The API
# differences of
# older releases are cfgs set by crates/bench-lance/build.rs from Cargo.lock, so the copy
# differs from this tree only in its pins. BENCH names this tree's bench (default
# ${CARGO_TARGET_DIR:-target}/release/bench).
#
# A run is RED when bench says the catalog broke its promise: a cell that failed or failed
# verification, any anomaly of the consistency checker (stale reads, resurrections,
# monotonic or read-your-writes violations, phantoms, duplicates, a failure of the version
# order), readers or writers a cleanup left stuck (`stuck_readers`), or a write the catalog
# answered with a definite error whose effect landed (`outcomes.failed_but_applied`). A write whose reply was lost is unknown (Jepsen's `info`)
# resolved landed or not: no answer said it failed, so it is no finding by itself. GREEN
# otherwise. The script exits 0 when every build is as the table says (the buggy release
# red, the others green) and 1 when not.
set -euo pipefail
cd "$(dirname "$0")/.."
HERE=$PWD
DIR="${TRACK_RECORD_DIR:-$HOME/.cache/track-record}"
BENCH="${BENCH:-${CARGO_TARGET_DIR:-target}/release/bench}"
SERVER=
trap '[ -z "$SERVER" ] || kill "$SERVER" 2>/dev/null || true' EXIT

# bug | plan | the releases it is red on, as measured (space-separated) | the builds it is
# green on: the release before the first red one where measured, the release that fixed it,
# a patched build (none: nothing yet) | where (local; s3, the S3 test server as it starts;
# or its options: moto behind scripts/s3-server.py) | what it broke
BUGS=(
  "8233|empty-root|10.0.0|11.0.0|local|a namespace opened before the catalog existed listed nothing, forever"
  "7722|lost-reply|10.0.0|11.0.0|--lose-reply-every 2 --lose-reply-under /runs/|a commit whose reply was lost: its transaction file deleted, an error answered for a commit that landed"
  "7939|lost-reply-version|9.0.0 10.0.0|11.0.0|--lose-reply-every 2 --lose-reply-under bench_shared/_versions/|a table version whose publication (a PUT if absent) lost its reply: the store's retry answered 412, create_table_version a conflict for a version that had landed, and the append landed twice"
  "cleanup-gap|cleanup-gap|8.0.0 11.0.0 14.0.2|7.0.0 14.0.2+fix|local|a warm reader whose next version a cleanup removed serves its own version, whose files are gone: every read fails (or misses every commit since) until it is opened again (docs/findings/cleanup-gap.md)"
  "lost-reply-head|lost-reply-head|11.0.0 14.0.2|14.0.2+fix|--lose-reply-every 4 --lose-reply-under /runs/ --head-no-length _versions/|a __manifest commit whose reply was lost, checked with HEADs that give no length: lance deletes the data file of a version that landed, and every later operation fails (docs/findings/lost-reply-head.md)"
  "lost-reply-slowdown|lost-reply-slowdown|8.0.0 9.0.0 10.0.0 11.0.0 14.0.2|14.0.2+fix|s3|the same deletion with a correct store: a lost reply, then 503 SlowDown to the look-up's every send (a campaign point armed by its worker; docs/findings/lost-reply-head.md). On 7.0.0 the same fault deletes the transaction file instead (#7722's bug), so its row leaves 7.0.0 out"
  "silent-stale|silent-stale|14.0.2 14.0.2+fix|none|local|the cleanup gap's silent form: a warm reader whose caches answer its listing (a namespace empty at the version it holds) serves that version after a cleanup removed the next one, without an error: it misses every table declared since, for ever; the patch, which heals a read that meets a missing file, leaves it (docs/findings/cleanup-gap.md)"
  "idle-writer|idle-writer|14.0.2|14.0.2+fix|local|the cleanup gap reaches writers: an idle writer's commit counts rows of the version it holds, whose index a cleanup removed: every write of it fails from then on (docs/findings/cleanup-gap.md)"
  "paused-reader|paused-reader|14.0.2|14.0.2+fix|s3|a reader paused (SIGSTOP) across another client's commits and a cleanup keeping 1 version, then resumed: it serves the version it held, whose files are gone, and every listing fails (a campaign of pauses; docs/findings/cleanup-gap.md)"
  "3718|paused-writer|7.0.0 8.0.0 9.0.0 10.0.0 11.0.0 14.0.2|none|s3|a writer paused before its commit's PUT if absent while others commit and a cleanup keeps 1 version: it writes the version the cleanup removed, is told it succeeded, and its entry is in no version the catalog reads (docs/findings/paused-writer.md)"
)
# The lance release this tree builds against (its own bench, $BENCH, runs it).
THIS_LANCE=$(sed -n 's/^lance = { version = "=\([0-9.]*\)".*/\1/p' crates/bench-lance/Cargo.toml)

bug() {
  for b in "${BUGS[@]}"; do
    [ "${b%%|*}" = "$1" ] && { echo "$b"; return; }
  done
  echo "unknown bug '$1': scripts/track-record.sh list names them" >&2
  exit 2
}

build() {
  local v=$1 src="$DIR/src-$1" target="${FIX_TARGET:-$DIR/target}" fix=no
  if [[ "$v" == *+fix ]]; then
    fix=yes
    v=${v%+fix}
  else
    target="$DIR/target"
  fi
  [[ "$v" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] \
    || { echo "'$v' is not a lance release (e.g. 10.0.0, or 14.0.2+fix)" >&2; exit 2; }
  mkdir -p "$DIR"
  rm -rf "$src" && mkdir -p "$src"
  git -C "$HERE" ls-files -z | (cd "$HERE" && xargs -0 tar -c) | tar -x -C "$src"
  if [ "$fix" = yes ]; then
    # lance-namespace-impls VERSION unpacked from cargo's registry, every patch of
    # docs/findings/patches applied, and built in its place through [patch.crates-io].
    (cd "$src" && cargo fetch -q)
    local crate
    crate=$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/"lance-namespace-impls-$v" | head -1)
    cp -r "$crate" "$src/patched-namespace"
    for p in "$HERE"/docs/findings/patches/*.patch; do
      (cd "$src/patched-namespace" && patch -s -p1 <"$p") \
        || { echo "$p does not apply to lance-namespace-impls $v" >&2; exit 1; }
    done
    printf '\n[patch.crates-io]\nlance-namespace-impls = { path = "patched-namespace" }\n' >>"$src/Cargo.toml"
    # The build says which patches it applied (BENCH_LANCE_FIXES): the binary's lance
    # version ends in +fix, and the lance-style tests expect those findings fixed. Its
    # build scripts run again whenever the variable changes, so a target this tree shares
    # keeps no claim of the copy's in this tree's next build.
    local fixes
    fixes=$(cd "$HERE/docs/findings/patches" && ls -- *.patch | sed 's/\.patch$//' | paste -sd, -)
    echo "building bench against lance $v with lance-namespace-impls patched ($fixes) in $target" >&2
    (cd "$src" && BENCH_LANCE_FIXES="$fixes" CARGO_TARGET_DIR="$target" \
      cargo build --release -q --bin bench) >&2
    # The findings' tests in lance's style, against the patched crate: each expects its
    # finding fixed (bench_lance::lance_fixes).
    (cd "$src" && BENCH_LANCE_FIXES="$fixes" CARGO_TARGET_DIR="$target" \
      cargo test --release -q --test it lance_style) >&2
    local exe="$DIR/bench-$v+fix"
    cp "$target/release/bench" "$exe"
    "$exe" --version >&2
    echo "$exe"
    return
  fi
  # lance's crates at VERSION; object_store at the version that lance asks for, so the
  # store bench wraps is the one lance calls.
  sed -i -E "/^lance[a-z-]* = /s/\"=[0-9]+\.[0-9]+\.[0-9]+\"/\"=$v\"/" "$src/crates/bench-lance/Cargo.toml"
  (cd "$src" && cargo fetch -q)
  local reg os
  reg=$(cd "$src" && cargo metadata --format-version 1 -q \
    | python3 -c 'import json,sys; m=json.load(sys.stdin); print(next(p["manifest_path"] for p in m["packages"] if p["name"]=="lance"))')
  os=$(grep -A1 '^\[dependencies.object_store\]' "$reg" | sed -n 's/^version = "\(.*\)"/\1/p')
  sed -i -E "s/^object_store = \{ version = \"[^\"]+\"/object_store = { version = \"$os\"/" \
    "$src/Cargo.toml" "$src/crates/bench-lance/Cargo.toml"
  echo "building bench against lance $v (object_store $os) in $target" >&2
  (cd "$src" && CARGO_TARGET_DIR="$target" cargo build --release -q --bin bench) >&2
  local exe="$DIR/bench-$v"
  cp "$target/release/bench" "$exe"
  "$exe" --version >&2
  echo "$exe"
}

# RED or GREEN, and why, for one results directory and the run's exit code.
judge() {
  python3 - "$1" "$2" "$3" <<'PY'
import json, sys
out, code, name = sys.argv[1], int(sys.argv[2]), sys.argv[3]

ANOMALIES = ["stale_reads", "resurrections", "monotonic_violations",
             "read_your_writes_violations", "phantoms", "duplicates"]
ORDER = ["not_its_version", "no_such_state", "versions_back", "write_order",
         "one_version_twice"]
red = code != 0
try:
    records = [json.loads(l) for l in open(f"{out}/results.jsonl")]
except FileNotFoundError:
    records = []
if not records:
    print(f"  {name}: RED  bench exited {code} and recorded no cell")
    sys.exit(1)
for r in records:
    if name != "this" and r["lance_version"] != name:
        print(f"  {name}: its binary ran lance {r['lance_version']}: "
              f"scripts/track-record.sh build {name}", file=sys.stderr)
        sys.exit(2)
    c = r.get("consistency") or {}
    o = r.get("outcomes") or {}
    found = {k: c[k] for k in ANOMALIES if c.get(k)}
    order = c.get("order") or {}
    for k in ORDER:
        if (order.get(k) or {}).get("count"):
            found[f"version order: {k}"] = order[k]["count"]
    landed = o.get("failed_but_applied", 0)
    if landed:
        found["writes answered with a definite error yet landed"] = landed
    stuck = r.get("stuck_readers") or {}
    if stuck:
        if stuck.get("readers"):
            found["stuck readers (a cleanup left them behind)"] = stuck["readers"]
        if stuck.get("writers"):
            found["stuck writers (a cleanup left them behind)"] = stuck["writers"]
    bad = found or not r["verified"]
    red = red or bad
    what = ", ".join(f"{k} {v}" for k, v in found.items()) or "no anomaly"
    verified = "verified" if r["verified"] else f"verification failed: {r['verify_error']}"
    writes = (f"writes ok {o.get('ok', 0)}, failed {o.get('failed', 0)}, unknown "
              f"{o.get('unknown', 0)} (landed {o.get('unknown_landed', 0)})")
    if c:
        lag = (f"lag {c['lag_low_max_ms']:.0f}..{c['lag_max_ms']:.0f} ms at most over "
               f"{c['lag_pairs']} pairs" if c.get("lag_pairs") else "no reader saw any commit")
        if c.get("lag_unseen_pairs"):
            lag += (f", {c['lag_unseen_pairs']} (commit, reader) pairs never seen: a lag of at "
                    f"least {c['lag_unseen_low_max_ms']:.0f} ms, without bound")
        seen = f"; {c['reads']} reads of {c['creations']} creations, {lag}"
    else:
        seen = ""
    print(f"  {name} lance {r['lance_version']} {r['bench_tag']} {r['variant']}: "
          f"{'RED' if bad else 'GREEN'}  {what}; {verified}; {writes}{seen}")
    firsts = [c.get("first_violation")] + [(order.get(k) or {}).get("first") for k in ORDER]
    firsts.append(stuck.get("first"))
    for first in firsts + [o.get("first_failed_but_applied"), o.get("first_unknown")]:
        if first:
            print(f"    first: {first}")
print(f"  {name}: {'RED' if red else 'GREEN'} (bench exited {code})")
sys.exit(1 if red else 0)
PY
}

# A fresh S3 test server with the options given, on a free port: sets PORT and SERVER.
server() {
  local py=python3 out=$1; shift
  "$py" -c "import moto" 2>/dev/null || py="$HOME/.cache/bench-test/venv/bin/python3"
  [ -x "$(command -v "$py")" ] || { echo "moto is not installed: run scripts/test.sh once, or pip install 'moto[server]' boto3" >&2; exit 1; }
  PORT=$("$py" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  "$py" scripts/s3-server.py --port "$PORT" --bucket bench "$@" > "$out" 2>&1 &
  SERVER=$!
  for _ in $(seq 300); do
    grep -q ready "$out" 2>/dev/null && return 0
    sleep 0.2
  done
  echo "the S3 test server did not start:" >&2
  tail -5 "$out" >&2
  exit 1
}

# The builds a row names, in its order: the releases it is red on, then those green on (`none`
# left out).
releases() {
  local v
  for v in $1 $2; do [ "$v" = none ] || echo "$v"; done
}

run() {
  local line plan bad good where what
  line=$(bug "$1")
  shift
  IFS='|' read -r _ plan bad good where what <<< "$line"
  [ -x "$BENCH" ] || { echo "build this tree's bench first: cargo build --release" >&2; exit 1; }
  local label="lance #${line%%|*}"
  [[ "${line%%|*}" =~ ^[0-9]+$ ]] || label="${line%%|*} (found by bench)"
  # Which builds run: those given after BUG (each one the row names), else all of them and
  # this tree, unless this tree's lance is one of them.
  local builds=() v
  if [ $# -gt 0 ]; then
    for v in "$@"; do
      [ "$v" = this ] || releases "$bad" "$good" | grep -qxF -- "$v" \
        || { echo "the row ${line%%|*} names no build '$v': it runs on $(releases "$bad" "$good" | paste -sd' ' -), and this tree (this)" >&2; exit 2; }
      builds+=("$v")
    done
  else
    mapfile -t builds < <(releases "$bad" "$good")
    releases "$bad" "$good" | grep -qxF -- "$THIS_LANCE" || builds+=(this)
  fi
  local missing=() there=()
  for v in "${builds[@]}"; do
    if [ "$v" = this ] || [ "$v" = "$THIS_LANCE" ] || [ -x "$DIR/bench-$v" ]; then
      there+=("$v")
    else
      missing+=("$v")
    fi
  done
  if [ ${#missing[@]} -gt 0 ]; then
    local instead=""
    [ ${#there[@]} -eq 0 ] || instead="; or run only the builds there are: scripts/track-record.sh run ${line%%|*} ${there[*]}"
    echo "no build for lance ${missing[*]}: $(printf 'scripts/track-record.sh build %s; ' "${missing[@]}" | sed 's/; $//')$instead" >&2
    exit 1
  fi
  echo "$label: $what (plans/$plan.toml)"
  echo "  red on: $bad; green on: $good"
  local work ok=0
  work=$(mktemp -d)
  trap 'rm -rf "$work"' RETURN
  for v in "${builds[@]}"; do
    [[ "$v" == *+fix ]] && echo "  $v is ${v%+fix} with docs/findings/patches applied"
    local exe=$BENCH want=GREEN
    [ "$v" = this ] || [ "$v" = "$THIS_LANCE" ] || exe="$DIR/bench-$v"
    # shellcheck disable=SC2086
    printf '%s\n' $bad | grep -qxF -- "$v" && want=RED
    local code=0 root="$work/store-$v" opts=()
    if [ "$where" != local ]; then
      # `s3`: the S3 test server with no fault of its own (a campaign's points arm theirs).
      read -r -a args <<< "${where#s3}"
      server "$work/server-$v.out" "${args[@]}"
      root="s3://bench/$v"
      opts=(--storage-option "aws_endpoint=http://127.0.0.1:$PORT"
            --storage-option aws_allow_http=true --storage-option aws_region=us-east-1)
    fi
    AWS_ACCESS_KEY_ID=testing AWS_SECRET_ACCESS_KEY=testing AWS_EC2_METADATA_DISABLED=true \
      "$exe" run "plans/$plan.toml" --out "$work/$v" --root "$root" ${opts[@]+"${opts[@]}"} \
      --progress lines > /dev/null 2> "$work/$v.log" || code=$?
    [ -z "$SERVER" ] || kill "$SERVER" 2>/dev/null || true
    SERVER=
    local got=GREEN judged=0
    judge "$work/$v" "$code" "$v" || judged=$?
    [ "$judged" -ne 2 ] || exit 2
    [ "$judged" -eq 0 ] || got=RED
    if [ "$got" != "$want" ]; then
      echo "  lance $v: expected $want, got $got (its log: $work/$v.log)"
      ok=1
      trap - RETURN
    fi
  done
  releases none "$good" | grep -qv '+fix$' || echo "  no release fixes it yet"
  return $ok
}

case "${1:-}" in
  build) [ $# -eq 2 ] || { echo "usage: $0 build VERSION" >&2; exit 2; }; build "$2" ;;
  run) [ $# -ge 2 ] || { echo "usage: $0 run BUG [BUILD...]" >&2; exit 2; }; shift; run "$@" ;;
  list)
    for b in "${BUGS[@]}"; do
      IFS='|' read -r n plan bad good where what <<< "$b"
      echo "#$n  plans/$plan.toml ($where)  red on $bad; green on $good: $what"
    done ;;
  *) sed -n '2,24p' "$0" >&2; exit 2 ;;
esac
