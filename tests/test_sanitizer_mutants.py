"""Mutants only the sanitizer pass catches (tests/mutants/sanitizer_mutants.py).

On the CPU: they register, say why they cannot run here, and each source
names the check that catches it (scripts/compile-hip.sh compiles them for
both vendors). On an NVIDIA GPU (``GEMMREG_DEVICE=cuda``, compute-sanitizer
installed) each is run under its check and must fail it, with the subset's
values checked the ordinary way beside it.
"""

from __future__ import annotations

import pytest
from conftest import TESTS, only_extra_plugins
from gemmreg.checking import check_runner, matrix, sanitizer_pass, sanitizer_tools
from gemmreg.contract import backend
from gemmreg.discovery.registry import discover
from mutants.sanitizer_mutants import MUTANTS

EXPECTED_EVIDENCE = {
    "racecheck": "shared-memory race",
    "memcheck": "Invalid __global__ read",
    "smempoison": "NaN computed by the kernel",
}


def test_the_mutants_register_and_name_their_check():
    with only_extra_plugins(["mutants.sanitizer_mutants"]):
        found = discover()
        for name, (kernel, tool, _) in MUTANTS.items():
            spec = found.get(name).spec
            assert spec.sources == (str(TESTS / "mutants" / f"{kernel}.hip"),)
            header = (TESTS / "mutants" / f"{kernel}.hip").read_text().split("\n\n")[0]
            assert (
                f"Caught by: {'gemmreg' if tool == 'smempoison' else 'compute-sanitizer'}" in header
            )
            assert tool in header
            if not backend.current().is_gpu:
                assert "no GPU" in (spec.available() or "")


@pytest.fixture
def nvidia_gpu():
    kind = backend.current().kind
    if kind != "cuda":
        pytest.skip(f"needs an NVIDIA GPU (backend here: {kind}; on one, set GEMMREG_DEVICE=cuda)")


@pytest.mark.parametrize("name", list(MUTANTS))
def test_each_mutant_is_caught_by_its_check_on_the_gpu(nvidia_gpu, name, tmp_path):
    tool = MUTANTS[name][1]
    reason = sanitizer_tools.unavailable_reason(tool, "cuda")
    if reason:
        pytest.skip(reason)
    cases = matrix.sanitize_cases(["fp32"], ["rowmajor"])
    with only_extra_plugins(["mutants.sanitizer_mutants"]):
        kernels = discover().select([name])
        plain = check_runner.run_check(kernels, cases, gpu=True)
        caught = sanitizer_pass.run_pass(kernels, cases, [tool], "cuda", tmp_path)
    assert all(r.status == "pass" for r in plain if r.kind == "values"), [
        (r.id, r.reason) for r in plain if r.status != "pass"
    ]
    failed = [r for r in caught if r.status == "fail"]
    assert failed, [(r.id, r.status, r.reason) for r in caught]
    assert any(EXPECTED_EVIDENCE[tool] in r.reason for r in failed)
