"""What judges a kernel, as it was before any plugin code ran, and whether a
plugin replaced any of it.

The checker computes the float64 reference and compares C with it in the
worker where the plugin's own code has run. A plugin that replaces what
computes the reference (``torch.Tensor.__matmul__`` returning zeros in
float64) or what compares (``gemmreg.checking.output_check.compare``
returning passed) would pass any output, and a kernel writing zeros was
judged the faster. So:

- :func:`baseline` reads, once per process and before plugins load (the
  worker calls it before discovery), the identity of every function and
  class of gemmreg's judging modules (and the code of each Python
  function), of what torch's tensors do (``torch.Tensor``'s and its C
  base's attributes) and of the torch functions the judge calls, each
  listed op's kernels in torch's dispatcher, and the torch function and
  dispatch mode stacks; and captures the ops the reference is computed
  with (:func:`ops`), so rebinding a Python name later reaches none of them.
- :func:`changes` reads them again: a plugin that replaced any of it fails
  its own case with one line naming what (through
  :mod:`gemmreg.discovery.state_changes`, as a changed torch switch does);
  :func:`restore` puts the originals back for the next plugin. Discovery
  refuses a plugin that replaces any of it while it loads.

This watches what Python code ordinarily does (assigning an attribute,
registering a kernel for an aten op, entering a mode and leaving it on);
code that edits memory through ``ctypes`` is beyond what one process can
guard against itself.
"""

from __future__ import annotations

import contextlib
import importlib
import sys
import types
from typing import Any

import attrs

JUDGE_MODULES = (
    "gemmreg.checking.output_check",
    "gemmreg.checking.reference_product",
    "gemmreg.checking.guarded_output",
    "gemmreg.checking.guarded_inputs",
    "gemmreg.checking.operands",
    "gemmreg.checking.non_finite_notes",
    "gemmreg.checking.check_kinds",
    "gemmreg.checking.check_kind_values",
    "gemmreg.contract.inputs",
    "gemmreg.contract.records",
    "gemmreg.contract.tolerance_bounds",
    "gemmreg.contract.low_precision",
    "gemmreg.contract.grouping",
    "gemmreg.contract.backend",
    "gemmreg.discovery.state_changes",
    "gemmreg.discovery.torch_state",
    "gemmreg.discovery.judge_state",
    "gemmreg.workers.task_results",
    "gemmreg.timing.timed_kernel",
    "gemmreg.timing.fresh_values",
    "attrs",
    "math",
)
"""Modules whose functions and classes (and those classes' methods) judge a
kernel, imported by :func:`baseline` so a plugin cannot reach them first."""

TORCH_FUNCTIONS = (
    "mm", "addmm", "matmul", "abs", "equal", "stack", "cat", "zeros", "zeros_like",
    "empty", "full", "tensor", "where", "roll", "pow", "remainder", "log2", "arange",
    "rand", "randn", "randint", "isfinite", "isnan", "as_strided",
)  # fmt: skip
"""The torch functions the judge and the core's inputs call (never
``manual_seed``, which importing torch._dynamo legitimately rewraps)."""

DISPATCHED_OPS = (
    "aten::mm", "aten::addmm_", "aten::addmm", "aten::abs", "aten::_to_copy", "aten::copy_",
    "aten::sub.Tensor", "aten::le.Tensor", "aten::mul.Tensor", "aten::add.Tensor",
    "aten::isfinite", "aten::sum", "aten::eq.Tensor", "aten::equal", "aten::div.Tensor",
    "aten::max", "aten::stack", "aten::cat",
)  # fmt: skip
"""The aten ops the reference and the comparison run: their kernels in
torch's dispatcher must stay the ones registered before plugins ran."""

DISPATCH_KEYS = frozenset(
    {
        "CPU",
        "CUDA",
        "HIP",
        "CompositeImplicitAutograd",
        "CompositeExplicitAutograd",
        "CompositeExplicitAutogradNonFunctional",
        "Autograd",
        "AutogradCPU",
        "AutogradCUDA",
        "ADInplaceOrView",
    }
)
"""The dispatch keys an op runs through on real tensors, read from
``torch._C._dispatch_dump``; others (Meta, which torch fills in lazily) may
change without changing a result."""


@attrs.frozen
class Ops:
    """The ops the reference is computed with, captured by :func:`baseline`."""

    mm: Any
    addmm_: Any


@attrs.frozen
class JudgeState:
    objects: dict[str, tuple[Any, ...]]
    """Name → (the object, and for a Python function its code, defaults and closure)."""
    names: dict[str, frozenset[str]]
    """Each namespace's names: one added shadows what it had (an attribute set
    on ``torch.Tensor`` overrides the method of its C base; a global set in
    a judging module, a built-in)."""
    dispatch: dict[str, tuple[str, ...]]
    modes: tuple[int, int]


_baseline: list[tuple[JudgeState, Ops]] = []


def _fingerprint(value: Any) -> tuple[Any, ...]:
    if isinstance(value, types.FunctionType):
        return (value, value.__code__, value.__defaults__, value.__kwdefaults__)
    return (value,)


def _namespaces() -> list[tuple[str, Any, bool]]:
    """(label, owner, whether to read its classes' attributes too)."""
    import torch

    found: list[tuple[str, Any, bool]] = []
    for name in JUDGE_MODULES:
        module = sys.modules.get(name) or importlib.import_module(name)
        found.append((name, module, name.startswith("gemmreg.")))
    found.append(("torch.Tensor", torch.Tensor, False))
    base = getattr(torch._C, "TensorBase", None) or getattr(torch._C, "_TensorBase", None)
    if base is not None:
        found.append(("torch._C.TensorBase", base, False))
    return found


BUILTINS = ("all", "any", "abs", "bool", "float", "int", "len", "max", "min", "sum", "zip")
"""The built-in functions the judge calls."""


def _read_objects() -> dict[str, tuple[Any, ...]]:
    import builtins

    import torch

    objects: dict[str, tuple[Any, ...]] = {}
    for label, owner, with_classes in _namespaces():
        is_module = isinstance(owner, types.ModuleType)
        for name, value in list(vars(owner).items()):
            if is_module and not callable(value):
                continue
            objects[f"{label}.{name}"] = _fingerprint(value)
            if with_classes and isinstance(value, type) and value.__module__ == label:
                for attr, member in list(vars(value).items()):
                    if callable(member) or isinstance(member, classmethod | staticmethod):
                        objects[f"{label}.{name}.{attr}"] = _fingerprint(member)
    for name in BUILTINS:
        objects[f"builtins.{name}"] = _fingerprint(getattr(builtins, name))
    for name in TORCH_FUNCTIONS:
        if hasattr(torch, name):
            objects[f"torch.{name}"] = _fingerprint(getattr(torch, name))
    return objects


def _dispatch(op: str) -> tuple[str, ...]:
    import torch

    try:
        dump = torch._C._dispatch_dump(op)
    except Exception:  # an op this torch lacks
        return ()
    return tuple(
        line
        for line in dump.splitlines()
        if line.split(":", 1)[0].replace(" (inactive)", "").strip() in DISPATCH_KEYS
    )


def _modes() -> tuple[int, int]:
    import torch

    return torch._C._len_torch_function_stack(), torch._C._len_torch_dispatch_stack()


def read() -> JudgeState:
    """A reading of everything the judge relies on, as it is now."""
    return JudgeState(
        objects=_read_objects(),
        names={label: frozenset(vars(owner)) for label, owner, _ in _namespaces()},
        dispatch={op: _dispatch(op) for op in DISPATCHED_OPS},
        modes=_modes(),
    )


def baseline() -> tuple[JudgeState, Ops]:
    """The reading before plugins (taken on the first call) and the captured ops."""
    if not _baseline:
        import torch

        aten = torch.ops.aten
        _baseline.append((read(), Ops(mm=aten.mm.default, addmm_=aten.addmm_.default)))
    return _baseline[0]


def ops() -> Ops:
    """The ops the reference is computed with, as captured at :func:`baseline`."""
    return baseline()[1]


def differences(now: JudgeState, before: JudgeState) -> list[str]:
    """One phrase per thing ``now`` has that ``before`` had otherwise."""
    found = [
        f"replaced {name}"
        for name, fingerprint in before.objects.items()
        if now.objects.get(name) is None or not _same(now.objects[name], fingerprint)
    ]
    found += [
        f"replaced {label}.{name}"
        for label, names in before.names.items()
        for name in sorted(now.names.get(label, names) - names)
    ]
    found += [
        f"registered its own kernel for {op} in torch's dispatcher"
        for op, lines in before.dispatch.items()
        if now.dispatch.get(op) != lines
    ]
    if now.modes != before.modes:
        found.append("left a torch function or dispatch mode active")
    return found


def _same(now: tuple[Any, ...], before: tuple[Any, ...]) -> bool:
    return len(now) == len(before) and all(x is y for x, y in zip(now, before, strict=True))


def changes() -> list[str]:
    """What differs now from :func:`baseline` (nothing: an empty list)."""
    return differences(read(), baseline()[0])


def restore(before: JudgeState | None = None) -> None:
    """Put back what :func:`changes` names, where Python can: attributes and
    code (from ``before``, the baseline by default) and the mode stacks.
    A kernel registered in the dispatcher stays; :func:`changes` keeps
    naming it, so every later case in this process fails rather than pass."""
    import builtins

    import torch

    state = before or baseline()[0]
    owners = {label: owner for label, owner, _ in _namespaces()}
    owners.update({f"{label}.{n}": v for label, o, _ in _namespaces() for n, v in vars(o).items()})
    for name, (value, *code) in state.objects.items():
        owner_name, _, attr = name.rpartition(".")
        owner = owners.get(owner_name) or {"torch": torch, "builtins": builtins}.get(owner_name)
        try:
            if owner is not None and getattr(owner, attr, None) is not value:
                setattr(owner, attr, value)
            if code and isinstance(value, types.FunctionType):
                value.__code__, value.__defaults__, value.__kwdefaults__ = code
        except (AttributeError, TypeError):  # a C type's attribute cannot be set back
            continue
    for label, owner, _ in _namespaces():
        for name in set(vars(owner)) - state.names.get(label, set(vars(owner))):
            with contextlib.suppress(AttributeError, TypeError):
                delattr(owner, name)
    while torch._C._len_torch_function_stack() > state.modes[0]:
        torch._C._pop_torch_function_stack()
    while torch._C._len_torch_dispatch_stack() > state.modes[1]:
        torch._C._pop_torch_dispatch_stack()
