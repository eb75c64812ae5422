# tests/test_speed.py: `pytest tests/test_speed.py` on a GPU runner; on a CPU, skipped
import pytest
from gemmreg.testing import verdict


@pytest.mark.parametrize("shape", ["4096x4096x4096", "128x4096x4096"])
def test_triton_tuned_keeps_up_with_cublas(shape):
    found = verdict("triton_tuned", "torch_ref", shape=shape, dtype="bf16", layout="transposedB")
    assert found.not_slower, found.explanation
