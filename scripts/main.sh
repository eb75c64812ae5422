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
  "Every plugin against a float64 reference over shapes, dtypes, layouts and value kinds: a line per failing case, progress every 10 s, then a row per plugin and dtype (its worst error beside its tolerance) and a count. Every case: add -v, or see $out/check/."
"$gemmreg" check --out "$out/check" --force

# Under Triton's interpreter a Triton kernel's speed is NumPy's on the host:
# timed against torch_ref's native BLAS, the ratio says nothing about either
# kernel (gemmreg gives that pair NO VERDICT). So where Triton is interpreted
# the first comparison is two Triton kernels, like for like.
if [ "$(.venv/bin/python -c 'import gemmreg; print(int(gemmreg.where().triton_interpreted))')" = 1 ]; then
  pair=(triton_baseline triton_grouped)
  why="Triton runs under its interpreter here: two Triton kernels, like for like (torch_ref's BLAS against the interpreter gets NO VERDICT)."
  shape=64x96x128 sweep=32:128:32
else
  pair=(torch_ref triton_grouped)
  why="The vendor library against a Triton kernel, both native on this GPU."
  shape=4096x4096x4096 sweep=512:4096:512
fi
step "4/4 gemmreg compare ${pair[*]}: is one really faster?" \
  "Paired rounds in independent processes, then FASTER, SLOWER, EQUIVALENT or INCONCLUSIVE with an interval. Saved in $out/compare/." \
  "$why"
# --force: a second run of the main job replaces its own earlier comparison
# (a run folder that holds a run is otherwise refused, so no run is lost).
"$gemmreg" compare "${pair[@]}" --out "$out/compare" --force

cat <<EOF

==> What next
    Your own shape and dtype:   $gemmreg compare ${pair[*]} --shape $shape --dtype fp16
    A sweep, then its plots:    $gemmreg bench ${pair[*]} --shape $sweep --out runs/sweep
                                $gemmreg report runs/sweep --plot runs/sweep
    This run's verdicts again:  $gemmreg report $out/compare --verdicts
    The check's table again:    $gemmreg report $out/check
    Your own kernel as a plugin: docs/plugins.md (the smallest one: examples/gemmreg-minimal/)
EOF
