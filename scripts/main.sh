#!/usr/bin/env bash
# The main job, as a first session with gemmreg: set up, see what is installed,
# check every plugin's correctness, time two kernels, then where to go next.
# On a machine with no GPU the Triton plugins run under Triton's interpreter and
# the HIP plugins are listed as unavailable, with the reason.
set -euo pipefail
cd "$(dirname "$0")/.."

out=${GEMMREG_MAIN_OUT:-runs/main}
gemmreg=.venv/bin/gemmreg

step() { # a heading: the step, then what it does and why
  printf '\n==> %s\n' "$1"
  shift
  printf '    %s\n' "$@"
  echo
}

step "1/4 Setting up .venv (scripts/bootstrap.sh)" \
  "gemmreg, its built-in plugins and the two example plugin packages, installed editable; a no-op when nothing changed."
scripts/bootstrap.sh

step "2/4 gemmreg list: what is installed" \
  "Every plugin gemmreg found: its package, the arithmetic it really does per dtype, its tolerance, and whether it can run here (and why not)."
"$gemmreg" list

step "3/4 gemmreg check: is every kernel correct?" \
  "Every plugin against a float64 reference over shapes, dtypes, layouts and value kinds, one case per line, then the table and a count. Also saved in $out/check/."
"$gemmreg" check --out "$out/check"

pair=(torch_ref triton_grouped)
step "4/4 gemmreg compare ${pair[*]}: is one really faster?" \
  "Paired rounds in independent processes, then FASTER, SLOWER, EQUIVALENT or INCONCLUSIVE with an interval. Saved in $out/compare/."
"$gemmreg" compare "${pair[@]}" --out "$out/compare"

cat <<EOF

==> What next
    Your own shape and dtype:   $gemmreg compare ${pair[*]} --shape 64x96x128 --dtype fp16
    A sweep, then its plots:    $gemmreg bench ${pair[*]} --shape 32:128:32 --out runs/sweep
                                $gemmreg report runs/sweep --plot runs/sweep
    This run's verdicts again:  $gemmreg report $out/compare --verdicts
    Your own kernel as a plugin: docs/plugins.md (the smallest one: examples/gemmreg-minimal/)
EOF
