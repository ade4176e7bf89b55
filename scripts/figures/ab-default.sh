# Sourced by the figure scripts that compare two builds on the default sweep's cells:
#
#   ab_default BASELINE CANDIDATE GLOB...
#
# runs `BASELINE ab plans/default.toml` on the cells matching the GLOBs against CANDIDATE
# at $THRESHOLD % with $BUDGET seconds a cell, in $WORK, and prints its table and verdicts;
# its log goes to $WORK/ab.log, shown where bench ab fails (an exit above 7).
ab_default() {
  local baseline=$1 candidate=$2 only=() code
  shift 2
  for glob in "$@"; do only+=(--only "$glob"); done
  set +e
  "$baseline" ab plans/default.toml "${only[@]}" \
    --candidate "$candidate" --out "$WORK/ab" --root "$WORK/store" \
    --threshold "$THRESHOLD" --budget-secs "$BUDGET" --progress lines 2>"$WORK/ab.log"
  code=$?
  set -e
  [ "$code" -le 7 ] || { tail -20 "$WORK/ab.log" >&2; exit 1; }
  echo "bench ab exit $code (0: no regression called)"
}
