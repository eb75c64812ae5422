"""Kernels that change torch's global state, and one that depends on it.

Each changer computes the right answer: only the global state it leaves
behind is wrong. ``fake_state_probe`` is a clean kernel that refuses to run
on anything but the pinned state (as torch_ref's IEEE fp32 claim depends on
TF32 being off): run after a changer in the same worker, it passes only if
the worker put the pinned state back.
"""

import gemmreg
import torch

from fake_plugins import fp32_spec


def mm(a, b, out):
    torch.mm(a, b, out=out)


def setting(change):
    def prepare(problem):
        change()
        return mm

    return prepare


def sets_float64():
    torch.set_default_dtype(torch.float64)


def sets_tf32():
    torch.backends.cuda.matmul.allow_tf32 = True


def sets_medium():
    torch.set_float32_matmul_precision("medium")


def sets_one_thread():
    """Not a precision: on the CPU every later figure in the worker gets slower."""
    torch.set_num_threads(1)


def changes_in_launch(a, b, out):
    torch.mm(a, b, out=out)
    torch.use_deterministic_algorithms(True)


_calls = [0]


def changes_on_third_call(a, b, out):
    """Well behaved at first (prepare, first call), then it turns TF32 on."""
    _calls[0] += 1
    if _calls[0] == 3:
        torch.backends.cuda.matmul.allow_tf32 = True
    torch.mm(a, b, out=out)


def leaked_state():
    """What the probe sees that it should not, or an empty list."""
    leaks = []
    if torch.get_default_dtype() != torch.float32:
        leaks.append(f"default dtype {torch.get_default_dtype()}")
    if torch.get_float32_matmul_precision() != "highest":
        leaks.append(f"float32_matmul_precision {torch.get_float32_matmul_precision()}")
    if torch.backends.cuda.matmul.allow_tf32:
        leaks.append("TF32 on")
    if torch.are_deterministic_algorithms_enabled():
        leaks.append("deterministic algorithms on")
    return leaks


def probe(a, b, out):
    leaks = leaked_state()
    if leaks:
        raise RuntimeError(f"fake_state_probe saw leaked state: {', '.join(leaks)}")
    torch.mm(a, b, out=out)


@gemmreg.hookimpl
def gemmreg_register_kernels(register):
    register(fp32_spec("fake_sets_float64", mm, prepare=setting(sets_float64)))
    register(fp32_spec("fake_sets_tf32", mm, prepare=setting(sets_tf32)))
    register(fp32_spec("fake_sets_medium", mm, prepare=setting(sets_medium)))
    register(fp32_spec("fake_sets_one_thread", mm, prepare=setting(sets_one_thread)))
    register(fp32_spec("fake_changes_in_launch", changes_in_launch))
    register(fp32_spec("fake_state_probe", probe))
    register(fp32_spec("fake_changes_later", changes_on_third_call))
