"""Plugin discovery: entry points in, validated kernels and visible failures out.

pluggy's own ``load_setuptools_entrypoints`` stops at the first plugin that
fails to import. Here every entry point is loaded and registered on its own,
and whatever goes wrong (import error, bad hook signature, bad record,
duplicate name) becomes a :class:`PluginIssue` row; the other plugins load.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import os
import sys
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs
import pluggy
from gemmreg import hookspecs
from gemmreg.hookspecs import PROJECT_NAME
from gemmreg.records import KernelSpec, SpecError

ENTRY_POINT_GROUP = PROJECT_NAME

ONLY_ENV = "GEMMREG_PLUGINS"
"""Comma-separated plugin (entry-point) names: load only these (``none``: no
entry point at all, only GEMMREG_EXTRA_PLUGINS)."""
NO_ENTRY_POINTS = "none"
BLOCK_ENV = "GEMMREG_BLOCK_PLUGINS"
"""Comma-separated plugin (entry-point) names never to load."""
EXTRA_ENV = "GEMMREG_EXTRA_PLUGINS"
"""Comma-separated module paths loaded as plugins besides the entry points: for
throwaway plugins in tests. Worker processes inherit it."""
TRACE_ENV = "GEMMREG_TRACE_PLUGINS"
"""Set to 1 to print every hook call and its result on stderr."""


@attrs.frozen(kw_only=True)
class Origin:
    """Where a plugin came from."""

    plugin: str
    """The entry-point name (or module path, for extra plugins)."""
    module: str
    distribution: str
    version: str

    @property
    def package(self) -> str:
        return f"{self.distribution} {self.version}".strip()

    def describe(self) -> str:
        where = self.package or f"module {self.module}"
        return f"plugin {self.plugin!r} ({where})"


@attrs.frozen(kw_only=True)
class RegisteredKernel:
    spec: KernelSpec
    origin: Origin

    @property
    def name(self) -> str:
        return self.spec.name


@attrs.frozen(kw_only=True)
class PluginIssue:
    """A plugin that did not load, or a declaration that was refused."""

    origin: Origin
    stage: str
    """``import``, ``hook``, ``register``, ``duplicate``, ``blocked`` or ``missing``."""
    reason: str


class UnknownKernelError(LookupError):
    def __init__(self, name: str, known: Iterable[str]):
        self.name = name
        self.known = sorted(known)
        hint = ", ".join(self.known) or "none installed"
        super().__init__(f"unknown plugin {name!r} (known: {hint})")


@attrs.define
class Registry:
    """The result of discovery: kernels by name, plus every problem met."""

    kernels: dict[str, RegisteredKernel] = attrs.field(factory=dict)
    issues: list[PluginIssue] = attrs.field(factory=list)

    def get(self, name: str) -> RegisteredKernel:
        try:
            return self.kernels[name]
        except KeyError:
            raise UnknownKernelError(name, self.kernels) from None

    def select(self, names: Sequence[str]) -> list[RegisteredKernel]:
        """The named kernels in the order given, or all of them, sorted by name."""
        if not names:
            return [self.kernels[name] for name in sorted(self.kernels)]
        return [self.get(name) for name in names]


def _split(value: str | None) -> list[str]:
    return [item.strip() for item in (value or "").split(",") if item.strip()]


def _distribution_of(entry_point: importlib.metadata.EntryPoint) -> tuple[str, str]:
    dist = getattr(entry_point, "dist", None)
    if dist is None:
        return "", ""
    return dist.metadata["Name"] or "", dist.version or ""


REASON_CHARS = 400
"""A failure reason is one line in a table: long messages are cut to this."""


def _describe(error: BaseException) -> str:
    lines = [line.strip() for line in str(error).strip().splitlines() if line.strip()]
    text = "; ".join(lines)
    if len(text) > REASON_CHARS:
        text = text[: REASON_CHARS - 3] + "..."
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def _trace(pm: pluggy.PluginManager) -> None:
    def before(hook_name: str, impls: Sequence[Any], kwargs: Mapping[str, Any]) -> None:
        plugins = ", ".join(impl.plugin_name for impl in impls)
        print(f"gemmreg trace: calling {hook_name} on [{plugins}]", file=sys.stderr)

    def after(outcome: Any, hook_name: str, impls: Sequence[Any], kwargs: Any) -> None:
        error = outcome.exception
        result = f"raised {_describe(error)}" if error else "returned"
        print(f"gemmreg trace: {hook_name} {result}", file=sys.stderr)

    pm.add_hookcall_monitoring(before, after)


def discover(
    extra_plugins: Sequence[str | object] = (),
    env: Mapping[str, str] | None = None,
    entry_points: Iterable[importlib.metadata.EntryPoint] | None = None,
) -> Registry:
    """Load every plugin, validate what it registers, and record what failed.

    :param extra_plugins: Module paths or plugin objects to register besides
        the entry points (module paths also come from ``GEMMREG_EXTRA_PLUGINS``).
    :param env: The environment to read the switches from (default ``os.environ``).
    :param entry_points: Override the installed entry points (for tests).
    """
    from gemmreg import backend

    env = os.environ if env is None else env
    backend.current()  # decides TRITON_INTERPRET before any plugin imports triton

    only = set(_split(env.get(ONLY_ENV)))
    blocked = set(_split(env.get(BLOCK_ENV)))
    registry = Registry()
    pm = pluggy.PluginManager(PROJECT_NAME)
    pm.add_hookspecs(hookspecs)
    if env.get(TRACE_ENV, "") not in ("", "0"):
        _trace(pm)

    candidates: list[tuple[Origin, Any]] = []  # (origin, loader)
    if entry_points is None:
        entry_points = importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)
    seen: set[str] = set()
    for ep in sorted(entry_points, key=lambda ep: ep.name):
        dist, version = _distribution_of(ep)
        origin = Origin(plugin=ep.name, module=ep.value, distribution=dist, version=version)
        seen.add(ep.name)
        if ep.name in blocked:
            registry.issues.append(PluginIssue(origin=origin, stage="blocked", reason=BLOCK_ENV))
            continue
        if only and ep.name not in only:
            continue
        candidates.append((origin, ep.load))

    for extra in [*_split(env.get(EXTRA_ENV)), *extra_plugins]:
        if isinstance(extra, str):
            origin = Origin(plugin=extra, module=extra, distribution="", version="")
            candidates.append((origin, lambda path=extra: importlib.import_module(path)))
        else:
            name = getattr(extra, "__name__", type(extra).__name__)
            origin = Origin(plugin=name, module=name, distribution="(in-process)", version="")
            candidates.append((origin, lambda obj=extra: obj))

    for name in sorted(only - seen - {NO_ENTRY_POINTS}):
        origin = Origin(plugin=name, module="", distribution="", version="")
        reason = f"named in {ONLY_ENV} but no entry point of that name is installed"
        registry.issues.append(PluginIssue(origin=origin, stage="missing", reason=reason))

    for origin, load in candidates:
        _load_one(pm, registry, origin, load)
    return registry


def _load_one(pm: pluggy.PluginManager, registry: Registry, origin: Origin, load: Any) -> None:
    def refuse(stage: str, reason: str) -> None:
        registry.issues.append(PluginIssue(origin=origin, stage=stage, reason=reason))

    try:
        plugin = load()
    except BaseException as error:  # a plugin's import may even call sys.exit
        if isinstance(error, KeyboardInterrupt):
            raise
        refuse("import", _describe(error))
        return
    try:
        pm.register(plugin, name=origin.plugin)
    except (pluggy.PluginValidationError, ValueError) as error:
        refuse("hook", _describe(error))
        return

    accepted: list[KernelSpec] = []

    def register(spec: KernelSpec) -> None:
        if not isinstance(spec, KernelSpec):
            raise SpecError(f"register() takes a gemmreg.KernelSpec, got {type(spec).__name__}")
        clash = registry.kernels.get(spec.name) or next(
            (RegisteredKernel(spec=s, origin=origin) for s in accepted if s.name == spec.name), None
        )
        if clash is not None:
            refuse(
                "duplicate",
                f"kernel name {spec.name!r} is already registered by {clash.origin.describe()}; "
                f"refused from {origin.describe()}",
            )
            return
        accepted.append(spec)

    others = [p for p in pm.get_plugins() if p is not plugin]
    caller = pm.subset_hook_caller("gemmreg_register_kernels", remove_plugins=others)
    try:
        caller(register=register)
    except Exception as error:
        refuse("register", f"{_describe(error)} (no kernel from this plugin was registered)")
        return
    if not accepted and not any(i.origin == origin for i in registry.issues):
        refuse("register", "the plugin registered no kernels")
    for spec in accepted:
        registry.kernels[spec.name] = RegisteredKernel(spec=spec, origin=origin)
