"""Plugin discovery: entry points in, validated kernels and visible failures out.

pluggy's own ``load_setuptools_entrypoints`` stops at the first plugin that
fails to import. Here every entry point is loaded and registered on its own,
and whatever goes wrong (import error, bad hook signature, bad record,
duplicate name, even ``sys.exit``, ``os._exit`` or a ``KeyboardInterrupt``
raised by plugin code) becomes a :class:`PluginIssue` row; the other plugins
load. A plugin that hangs while loading ends gemmreg with one line naming it
(:mod:`gemmreg.load_guard`). What a
plugin prints meanwhile is kept with its row (:mod:`gemmreg.capture`), and a
plugin that changes torch's global state at import is refused and the state
put back (:mod:`gemmreg.torch_state`).

A kernel name claimed by two plugins is never settled by load order: a
built-in's name cannot be taken, and two other packages claiming one name
are both refused, with the way to pick one (:data:`BLOCK_ENV`).
"""

from __future__ import annotations

import functools
import importlib
import importlib.metadata
import os
import sys
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs
import pluggy
from gemmreg import hookspecs, interrupts
from gemmreg.hookspecs import PROJECT_NAME
from gemmreg.records import KernelSpec

ENTRY_POINT_GROUP = PROJECT_NAME

ONLY_ENV = "GEMMREG_PLUGINS"
"""Comma-separated plugin (entry-point) names: load only these (``none``: no
entry point at all, only GEMMREG_EXTRA_PLUGINS)."""
NO_ENTRY_POINTS = "none"
BLOCK_ENV = "GEMMREG_BLOCK_PLUGINS"
"""Comma-separated plugin (entry-point) names never to load."""
EXTRA_ENV = "GEMMREG_EXTRA_PLUGINS"
"""Comma-separated module paths (or ``module:NAME`` of a KernelSpec) loaded as
plugins besides the entry points: for throwaway plugins in tests, and for
``gemmreg.testing.matrix(spec)``. Worker processes inherit it."""
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

    @functools.cached_property
    def unavailable(self) -> str | None:
        """Why this kernel cannot run here, or None. The plugin's ``available()``
        is asked once per process, at first use, and the answer is carried: the
        list, the check's plan, its sanitizer pass, ``--strict`` and the timing
        preflight all read the same one. Not at discovery itself: every worker
        discovers too, and needs no answer (its parent asked before sending work)."""
        from gemmreg.availability import unavailable_reason

        return unavailable_reason(self.spec)


@attrs.frozen(kw_only=True)
class PluginIssue:
    """A plugin that did not load, or a declaration that was refused."""

    origin: Origin
    stage: str
    """``import``, ``hook``, ``register``, ``duplicate``, ``state``, ``blocked`` or ``missing``."""
    reason: str
    kernel: str = ""
    """The kernel name refused, where the issue is about one name."""


class UnknownKernelError(LookupError):
    """A name no loaded plugin has. Plugins that failed to load without naming
    their kernels (an import error, a declaration refused) are listed, since
    the name may be one of theirs: "unknown" alone would send the user
    looking for a typo."""

    def __init__(self, name: str, known: Iterable[str], failed: Sequence[PluginIssue] = ()):
        self.name = name
        self.known = sorted(known)
        self.failed = list(failed)
        hint = ", ".join(self.known) or "none installed"
        message = f"unknown plugin {name!r} (known: {hint})"
        if self.failed:
            causes = "; ".join(
                f"{issue.origin.describe()}: {issue.stage}: {issue.reason}" for issue in self.failed
            )
            message += f"; it may be a kernel of a plugin that failed to load: {causes}"
        super().__init__(message)


class PluginNotLoadedError(UnknownKernelError):
    """The name is a plugin (or a kernel) that did not load: blame that, not a typo."""

    def __init__(self, name: str, issue: PluginIssue):
        self.name = name
        self.issue = issue
        if issue.stage == "blocked":
            message = f"plugin {name!r} is not loaded: blocked by {BLOCK_ENV}"
        else:
            message = f"plugin {name!r} failed to load: {issue.stage}: {issue.reason}"
        LookupError.__init__(self, message)


@attrs.define
class Registry:
    """The result of discovery: kernels by name, plus every problem met."""

    kernels: dict[str, RegisteredKernel] = attrs.field(factory=dict)
    issues: list[PluginIssue] = attrs.field(factory=list)
    output: dict[str, str] = attrs.field(factory=dict)
    """What each plugin (by :attr:`Origin.plugin`) printed while it loaded."""

    def get(self, name: str) -> RegisteredKernel:
        if name in self.kernels:
            return self.kernels[name]
        issue = self.issue_for(name)
        if issue is not None:
            raise PluginNotLoadedError(name, issue)
        failed = [i for i in self.issues if not i.kernel and i.stage in FAILED_STAGES]
        raise UnknownKernelError(name, self.kernels, failed)

    def issue_for(self, name: str) -> PluginIssue | None:
        """Why ``name`` (a kernel or a plugin) did not load, if it was seen at all."""
        for matches in (
            lambda i: i.kernel == name,
            lambda i: i.origin.plugin == name and i.stage != "duplicate",
        ):
            found = [issue for issue in self.issues if matches(issue)]
            if found:
                return found[0]
        return None

    def select(self, names: Sequence[str]) -> list[RegisteredKernel]:
        """The named kernels in the order given, or all of them, sorted by name."""
        if not names:
            return [self.kernels[name] for name in sorted(self.kernels)]
        return [self.get(name) for name in names]


FAILED_STAGES = ("import", "hook", "register", "state")
"""Issue stages after which a plugin's kernel names are unknown."""


def _import_reference(path: str) -> Any:
    """``package.module``, or ``package.module:NAME`` (an attribute, as entry
    points write it: a KernelSpec or a tuple of them, say)."""
    module, _, attribute = path.partition(":")
    loaded: Any = importlib.import_module(module)
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
        :func:`gemmreg.load_guard.load_timeout` to load. Workers turn it off:
        their whole start-up has a limit of its own, and a worker under a
        sanitizer loads far more slowly.
    """
    from gemmreg import backend, load_guard, loading

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
