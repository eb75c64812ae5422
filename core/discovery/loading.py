"""Loading one plugin, contained: whatever its code does becomes that plugin's row.

:func:`gemmreg.discovery.registry.discover` decides which plugins to load; this module
loads each one with its output captured (:mod:`gemmreg.discovery.capture`), torch's
global state and the process's environment, working directory, ``sys.path`` and
signal handlers watched (:mod:`gemmreg.discovery.torch_state`,
:mod:`gemmreg.discovery.process_state`), and every exception its
code raises, ``SystemExit`` and a plugin's own ``KeyboardInterrupt``
included, turned into a :class:`~gemmreg.discovery.registry.PluginIssue`, as is a call
of ``os._exit``; a hang ends gemmreg with one line (:mod:`gemmreg.discovery.load_guard`).
Only a real signal to gemmreg gets through (:mod:`gemmreg.discovery.interrupts`). Then
:func:`settle_names` registers the names claimed, never by load order.

What an entry point names may be a module (or object) with hook
implementations, or a :class:`~gemmreg.KernelSpec` or a tuple of them
(``package.module:NAME``), which :func:`as_plugin` wraps in a plugin of its
own: the supported way to give several kernels of one module entry-point
names of their own, since pluggy registers any one object once.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import pluggy
from gemmreg.contract.records import KernelSpec, SpecError
from gemmreg.discovery import (
    capture,
    interrupts,
    judge_state,
    load_guard,
    process_state,
    state_changes,
    torch_state,
)
from gemmreg.discovery.plugin_errors import CONTAINED as CONTAINED
from gemmreg.discovery.plugin_errors import REASON_CHARS as REASON_CHARS
from gemmreg.discovery.plugin_errors import describe as describe
from gemmreg.discovery.registry_records import (
    BLOCK_ENV,
    Origin,
    PluginIssue,
    RegisteredKernel,
    Registry,
)
from gemmreg.hookspecs import PROJECT_NAME

_hookimpl = pluggy.HookimplMarker(PROJECT_NAME)


class SpecPlugin:
    """A plugin made of the :class:`KernelSpec` objects an entry point names directly.

    Each entry point that names a spec gets a plugin object of its own, so one
    module's kernels can sit under separate entry-point names (each selected
    or blocked on its own), which pointing two entry points at the module
    itself cannot do: pluggy refuses to register one object twice."""

    def __init__(self, specs: Sequence[KernelSpec]) -> None:
        self.specs = tuple(specs)

    @_hookimpl
    def gemmreg_register_kernels(self, register: Callable[[KernelSpec], None]) -> None:
        for spec in self.specs:
            register(spec)


def as_plugin(loaded: object) -> object:
    """``loaded`` itself, or a :class:`SpecPlugin` where it is a KernelSpec or a
    non-empty tuple or list of them."""
    if isinstance(loaded, KernelSpec):
        return SpecPlugin([loaded])
    if (
        isinstance(loaded, tuple | list)
        and loaded
        and all(isinstance(spec, KernelSpec) for spec in loaded)
    ):
        return SpecPlugin(loaded)
    return loaded


def _already_registered(pm: pluggy.PluginManager, plugin: object, origin: Origin) -> str:
    """Why a second entry point naming the same module is refused, and what to do."""
    name = getattr(plugin, "__name__", type(plugin).__name__)
    return (
        f"{name} is already registered as plugin {pm.get_name(plugin)!r}, and pluggy "
        f"registers an object once; to give one module's kernels entry-point names of "
        f'their own, point each at a KernelSpec: {origin.plugin} = "{name}:SPEC" '
        "(see gemmreg.hookspecs)"
    )


def _unique_name(pm: pluggy.PluginManager, origin: Origin) -> str:
    """The name the plugin is registered under in pluggy, which refuses a name
    twice: the entry-point name (what trace lines show), else
    :attr:`Origin.key` (an extra plugin's module path may equal an entry-point
    name), numbered where that is taken too (two plugin objects of one class)."""
    for name in (origin.plugin, origin.key):
        if not pm.has_plugin(name):
            return name
    number = 2
    while pm.has_plugin(f"{origin.key}#{number}"):
        number += 1
    return f"{origin.key}#{number}"


def trace(pm: pluggy.PluginManager, lines: list[str]) -> None:
    """Trace lines are kept and printed after each plugin's output capture ends."""

    def before(
        hook_name: str, impls: Sequence[pluggy.HookImpl], kwargs: Mapping[str, object]
    ) -> None:
        plugins = ", ".join(impl.plugin_name for impl in impls)
        lines.append(f"gemmreg trace: calling {hook_name} on [{plugins}]")

    def after(
        outcome: pluggy.Result[object],
        hook_name: str,
        impls: Sequence[pluggy.HookImpl],
        kwargs: Mapping[str, object],
    ) -> None:
        error = outcome.exception
        result = f"raised {describe(error)}" if error else "returned"
        lines.append(f"gemmreg trace: {hook_name} {result}")

    pm.add_hookcall_monitoring(before, after)


def load_contained(
    pm: pluggy.PluginManager,
    registry: Registry,
    origin: Origin,
    load: Callable[[], object],
    timeout_s: float | None = None,
) -> list[tuple[Origin, KernelSpec]]:
    """Load one plugin with its output captured, torch's state and the
    process's own (:mod:`gemmreg.discovery.process_state`) watched and
    ``os._exit`` contained (a watchdog ends gemmreg after ``timeout_s``, see
    :mod:`gemmreg.discovery.load_guard`): its claims to kernel names, for :func:`settle_names`."""
    before, outside = torch_state.current(), process_state.current()
    judge_before = judge_state.read()
    with load_guard.guarded(origin.plugin, timeout_s), capture.captured_output() as output:
        specs = _load_one(pm, registry, origin, load)
    if output.text:
        registry.output[origin.plugin] = output.text
    changed = state_changes.differences(torch_state.current(), before)
    changed += judge_state.differences(judge_state.read(), judge_before)
    if changed:
        torch_state.restore(before)
        judge_state.restore(judge_before)
    moved = process_state.differences(process_state.current(), outside)
    if moved:
        process_state.restore(outside)
    if changed or moved:
        what = {(True, False): "torch's global state", (False, True): "gemmreg's process state"}
        what_changed = what.get((bool(changed), bool(moved)), "global state")
        reason = (
            f"changed {what_changed} while loading: {'; '.join(changed + moved)} "
            "(put back; no kernel from this plugin was registered)"
        )
        registry.issues.append(PluginIssue(origin=origin, stage="state", reason=reason))
        return []
    return [(origin, spec) for spec in specs]


def _load_one(
    pm: pluggy.PluginManager, registry: Registry, origin: Origin, load: Callable[[], object]
) -> list[KernelSpec]:
    """The plugin's accepted kernels; every refusal becomes an issue row."""

    def refuse(stage: str, reason: str, kernel: str = "") -> None:
        registry.issues.append(
            PluginIssue(origin=origin, stage=stage, reason=reason, kernel=kernel)
        )

    try:
        plugin = as_plugin(load())
    except BaseException as error:  # a plugin's import may even call sys.exit
        if interrupts.from_signal(error):
            raise
        refuse("import", describe(error))
        return []
    if pm.is_registered(plugin):
        refuse("hook", _already_registered(pm, plugin, origin))
        return []
    try:
        pm.register(plugin, name=_unique_name(pm, origin))
    except BaseException as error:  # a bad hook signature, or an object's attribute raising
        if interrupts.from_signal(error):
            raise
        refuse("hook", describe(error))
        return []

    accepted: list[KernelSpec] = []

    def register(spec: KernelSpec) -> None:
        if not isinstance(spec, KernelSpec):
            raise SpecError(f"register() takes a gemmreg.KernelSpec, got {type(spec).__name__}")
        if any(s.name == spec.name for s in accepted):
            refuse(
                "duplicate",
                f"kernel name {spec.name!r} registered twice by {origin.describe()}",
                spec.name,
            )
            return
        accepted.append(spec)

    others = [p for p in pm.get_plugins() if p is not plugin]
    caller = pm.subset_hook_caller("gemmreg_register_kernels", remove_plugins=others)
    try:
        caller(register=register)
    except BaseException as error:
        if interrupts.from_signal(error):
            raise
        reason = f"{describe(error)} (no kernel from this plugin was registered)"
        refuse("register", reason, error.kernel if isinstance(error, SpecError) else "")
        return []
    if not accepted and not any(i.origin == origin for i in registry.issues):
        refuse("register", "the plugin registered no kernels")
    return accepted


def settle_names(registry: Registry, claims: Sequence[tuple[Origin, KernelSpec]]) -> None:
    """Register every name claimed once; settle the others without regard to load order.

    A built-in's name stays the built-in's: whoever else claims it is refused.
    Two other packages claiming one name are both refused: picking one by
    load order would time the impostor silently."""
    by_name: dict[str, list[tuple[Origin, KernelSpec]]] = {}
    for origin, spec in claims:
        by_name.setdefault(spec.name, []).append((origin, spec))
    for name, claimants in sorted(by_name.items()):
        claimants.sort(key=lambda claim: claim[0].plugin)
        built_in = [c for c in claimants if c[0].built_in]
        if len(claimants) == 1 or len(built_in) == 1:
            origin, spec = claimants[0] if len(claimants) == 1 else built_in[0]
            registry.kernels[name] = RegisteredKernel(spec=spec, origin=origin)
            for other, _ in claimants:
                if other != origin:
                    reason = (
                        f"kernel name {name!r} belongs to gemmreg's built-in "
                        f"{origin.describe()}, which no plugin can replace; "
                        f"refused from {other.describe()}"
                    )
                    registry.issues.append(
                        PluginIssue(origin=other, stage="duplicate", reason=reason, kernel=name)
                    )
            continue
        who = " and ".join(origin.describe() for origin, _ in claimants)
        for origin, _ in claimants:
            keep = ",".join(o.plugin for o, _ in claimants if o != origin)
            reason = (
                f"kernel name {name!r} is claimed by {who}: refused from all of them; "
                f"to use {origin.describe()}, block the other with {BLOCK_ENV}={keep}"
            )
            registry.issues.append(
                PluginIssue(origin=origin, stage="duplicate", reason=reason, kernel=name)
            )
