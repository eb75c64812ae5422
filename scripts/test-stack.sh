#!/usr/bin/env bash
# The pytest part of the suite on another torch/Triton stack: scripts/test-stack.sh
# newest | oldest [pytest args]. CI runs it after scripts/test.sh (the default
# stack, constraints.txt), so the ranges pyproject.toml declares are the ones
# tested: constraints/oldest.txt is their bottom, constraints/newest.txt the
# newest releases. ruff and mypy do not depend on the stack and are not rerun.
#
# Each stack lives in its own .venv-NAME (about 5 GB: PyPI's torch wheels bring
# the CUDA libraries even where there is no GPU), installed on the first run and
# when pyproject.toml or the stack's file changes (5 minutes). The stack's file
# is pip's only constraint (PIP_CONSTRAINT replaces one from pip's config: this
# project's CPU machines cap torch at the release their disk holds).
set -euo pipefail
cd "$(dirname "$0")/.."
name=${1:?usage: scripts/test-stack.sh newest|oldest [pytest args]}
shift
pins=constraints/$name.txt
[ -f "$pins" ] || { echo "no stack '$name': constraints/ has $(cd constraints && ls)"; exit 2; }
venv=.venv-$name
python=${PYTHON:-python3}
[ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
stamp=$venv/gemmreg-stack.stamp
wanted=$(cat pyproject.toml "$pins" examples/gemmreg-splitk/pyproject.toml \
  examples/gemmreg-minimal/pyproject.toml | sha256sum)
here=$(pwd -P)
if [ "$(cat "$stamp" 2>/dev/null)" != "$wanted" ] || ! "$venv/bin/python" -c "
import sys, gemmreg
sys.exit(not gemmreg.__file__.startswith(sys.argv[1] + '/core/'))" "$here" 2>/dev/null; then
  # torch, triton and numpy named so that the stack's pins apply even where
  # nothing else asks for them (numpy is not a dependency of torch).
  PIP_CONSTRAINT=$pins "$venv/bin/python" -m pip install -q torch triton numpy \
    -e ".[dev]" -e examples/gemmreg-splitk -e examples/gemmreg-minimal
  echo "$wanted" >"$stamp"
fi
"$venv/bin/python" -c "
import platform, sys
from importlib.metadata import version
print(sys.argv[1] + ':', ', '.join(f'{d} {version(d)}' for d in ('torch', 'triton', 'numpy')),
      'on Python', platform.python_version())" "$name"
# As scripts/test.sh runs pytest (two processes, whole modules each).
"$venv/bin/python" -m pytest -n 2 --dist loadfile tests examples/gemmreg-splitk/tests \
  examples/gemmreg-minimal/tests "$@"
