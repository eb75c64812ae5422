"""Plugin discovery: entry points in, validated kernels and visible failures out.

pluggy's own ``load_setuptools_entrypoints`` stops at the first plugin that
fails to import. Here every entry point is loaded and registered on its own,
and whatever goes wrong (import error, bad hook signature, bad record,
duplicate name, even ``sys.exit``, ``os._exit`` or a ``KeyboardInterrupt``
raised by plugin code) becomes a :class:`PluginIssue` row; the other plugins
load. A plugin that hangs while loading ends gemmreg with one line naming it
(:mod:`gemmreg.discovery.load_guard`). What a
plugin prints meanwhile is kept with its row (:mod:`gemmreg.discovery.capture`), and a
plugin that changes torch's global state at import is refused and the state
put back (:mod:`gemmreg.discovery.torch_state`).

A kernel name claimed by two plugins is never settled by load order: a
built-in's name cannot be taken, and two other packages claiming one name
are both refused, with the way to pick one (:data:`BLOCK_ENV`). The same
holds for entry-point names, settled before anything is imported
(:mod:`gemmreg.discovery.plugin_names`). The records
of a discovery (:class:`Registry` and its rows) are
:mod:`gemmreg.discovery.registry_records`.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import os
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence

import pluggy
from gemmreg import hookspecs
from gemmreg.contract.records import KernelSpec
from gemmreg.discovery import interrupts, plugin_names

# What discovery fills in (loading fills it in too), named here as before:
from gemmreg.discovery.registry_records import BLOCK_ENV as BLOCK_ENV
from gemmreg.discovery.registry_records import FAILED_STAGES as FAILED_STAGES
from gemmreg.discovery.registry_records import Origin as Origin
from gemmreg.discovery.registry_records import PluginIssue as PluginIssue
from gemmreg.discovery.registry_records import PluginNotLoadedError as PluginNotLoadedError
from gemmreg.discovery.registry_records import RegisteredKernel as RegisteredKernel
from gemmreg.discovery.registry_records import Registry as Registry
from gemmreg.discovery.registry_records import UnknownKernelError as UnknownKernelError
from gemmreg.hookspecs import PROJECT_NAME

ENTRY_POINT_GROUP = PROJECT_NAME

ONLY_ENV = "GEMMREG_PLUGINS"
"""Comma-separated plugin (entry-point) names: load only these (``none``: no
entry point at all, only GEMMREG_EXTRA_PLUGINS)."""
NO_ENTRY_POINTS = "none"
EXTRA_ENV = "GEMMREG_EXTRA_PLUGINS"
"""Comma-separated module paths (or ``module:NAME`` of a KernelSpec) loaded as
plugins besides the entry points: for throwaway plugins in tests, and for
``gemmreg.testing.matrix(spec)``. Worker processes inherit it."""
TRACE_ENV = "GEMMREG_TRACE_PLUGINS"
"""Set to 1 to print every hook call and its result on stderr."""


def _import_reference(path: str) -> object:
    """``package.module``, or ``package.module:NAME`` (an attribute, as entry
    points write it: a KernelSpec or a tuple of them, say)."""
    module, _, attribute = path.partition(":")
    loaded: object = importlib.import_module(module)
    for part in filter(None, attribute.split(".")):
        loaded = getattr(loaded, part)
    return loaded


def _split(value: str | None) -> list[str]:
    return [item.strip() for item in (value or "").split(",") if item.strip()]


def _distribution_of(entry_point: importlib.metadata.EntryPoint) -> tuple[str, str]:
    dist = getattr(entry_point, "dist", None)
    if dist is None:
        return "", ""
    return dist.metadata["Name"] or "", dist.version or ""


def discover(
    extra_plugins: Sequence[str | object] = (),
    env: Mapping[str, str] | None = None,
    entry_points: Iterable[importlib.metadata.EntryPoint] | None = None,
    watchdog: bool = True,
) -> Registry:
    """Load every plugin, validate what it registers, and record what failed.

    :param extra_plugins: Module paths or plugin objects to register besides
        the entry points (module paths also come from ``GEMMREG_EXTRA_PLUGINS``).
    :param env: The environment to read the switches from (default ``os.environ``).
    :param entry_points: Override the installed entry points (for tests).
    :param watchdog: End gemmreg when one plugin takes longer than
        :func:`gemmreg.discovery.load_guard.load_timeout` to load. Workers turn it off:
        their whole start-up has a limit of its own, and a worker under a
        sanitizer loads far more slowly.
    """
    from gemmreg.contract import backend
    from gemmreg.discovery import load_guard, loading

    env = os.environ if env is None else env
    timeout_s = load_guard.load_timeout(env) if watchdog else None
    backend.current()  # decides TRITON_INTERPRET before any plugin imports triton

    only = set(_split(env.get(ONLY_ENV)))
    blocked = set(_split(env.get(BLOCK_ENV)))
    registry = Registry()
    pm = pluggy.PluginManager(PROJECT_NAME)
    pm.add_hookspecs(hookspecs)
    trace: list[str] = []
    if env.get(TRACE_ENV, "") not in ("", "0"):
        loading.trace(pm, trace)

    candidates: list[tuple[Origin, Callable[..., object]]] = []  # (origin, loader)
    if entry_points is None:
        entry_points = plugin_names.installed(ENTRY_POINT_GROUP)
    seen: set[str] = set()
    for ep in sorted(entry_points, key=lambda ep: ep.name):  # stable: path order within a name
        dist, version = _distribution_of(ep)
        origin = Origin(plugin=ep.name, module=ep.value, distribution=dist, version=version)
        seen.add(ep.name)
        if plugin_names.blocked(origin, blocked):
            registry.issues.append(PluginIssue(origin=origin, stage="blocked", reason=BLOCK_ENV))
            continue
        if only and ep.name not in only:
            continue
        candidates.append((origin, ep.load))
    candidates, refused = plugin_names.settle(candidates)
    registry.issues += refused

    for extra in [*_split(env.get(EXTRA_ENV)), *extra_plugins]:
        if isinstance(extra, str):
            origin = Origin(plugin=extra, module=extra, distribution="", version="")
            if extra in blocked:
                registry.issues.append(
                    PluginIssue(origin=origin, stage="blocked", reason=BLOCK_ENV)
                )
                continue
            candidates.append((origin, lambda path=extra: _import_reference(path)))
        else:
            name = getattr(extra, "__name__", type(extra).__name__)
            origin = Origin(plugin=name, module=name, distribution="(in-process)", version="")
            candidates.append((origin, lambda obj=extra: obj))

    for name in sorted(only - seen - {NO_ENTRY_POINTS}):
        origin = Origin(plugin=name, module="", distribution="", version="")
        reason = f"named in {ONLY_ENV} but no entry point of that name is installed"
        registry.issues.append(PluginIssue(origin=origin, stage="missing", reason=reason))

    claims: list[tuple[Origin, KernelSpec]] = []
    with interrupts.watching_interrupts():
        for origin, load in candidates:
            claims += loading.load_contained(pm, registry, origin, load, timeout_s)
            for line in trace:
                print(line, file=sys.stderr)
            trace.clear()
    loading.settle_names(registry, claims)
    return registry
