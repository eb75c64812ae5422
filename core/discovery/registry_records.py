"""What discovery hands the core: every kernel with where it came from, every
plugin that failed (and why), and the lookup by name that blames a plugin
that did not load rather than a typo. :mod:`gemmreg.discovery.registry` fills these
in (with :mod:`gemmreg.discovery.loading`); both import them from here.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence

import attrs
from gemmreg.contract.bad_input import UsageError, did_you_mean
from gemmreg.contract.records import KernelSpec


def normalized(name: str) -> str:
    """A distribution name as pip compares them (``Gemm_Reg`` is ``gemm-reg``)."""
    return re.sub(r"[-_.]+", "-", name).lower()


BLOCK_ENV = "GEMMREG_BLOCK_PLUGINS"
"""Comma-separated plugin (entry-point) names never to load; ``package:name``
blocks one package's entry point of a name two packages claim."""
BUILT_IN_DISTRIBUTION = "gemmreg"
"""The distribution the built-in plugins come with."""


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

    @property
    def built_in(self) -> bool:
        """One of gemmreg's own plugins: gemmreg's distribution *and* a module
        installed beside gemmreg itself (:func:`_beside_gemmreg`). A
        distribution name is only what a METADATA file says; any package can
        write ``Name: gemmreg`` in its own."""
        module = self.module.partition(":")[0].strip()
        return normalized(self.distribution) == BUILT_IN_DISTRIBUTION and _beside_gemmreg(module)

    @property
    def key(self) -> str:
        """Unique among the plugins of one discovery (an entry-point name alone
        is not: two packages may use one), so it names the plugin to pluggy."""
        return f"{self.distribution}:{self.plugin}" if self.distribution else self.plugin


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
        from gemmreg.discovery.availability import unavailable_reason

        return unavailable_reason(self.spec)


@attrs.frozen(kw_only=True)
class PluginIssue:
    """A plugin that did not load, or a declaration that was refused."""

    origin: Origin
    stage: str
    """``import``, ``hook``, ``register``, ``duplicate`` (a kernel name, or with no
    :attr:`kernel` an entry-point name, claimed twice), ``state``, ``blocked`` or ``missing``."""
    reason: str
    kernel: str = ""
    """The kernel name refused, where the issue is about one name."""


class UnknownKernelError(UsageError, LookupError):
    """A name no loaded plugin has. Plugins that failed to load without naming
    their kernels (an import error, a declaration refused) are listed, since
    the name may be one of theirs: "unknown" alone would send the user
    looking for a typo. Bad input like any other (:class:`UsageError`: one
    line on the command line, one exception type for the Python API), and
    still a ``LookupError`` for those who look a kernel up."""

    def __init__(self, name: str, known: Iterable[str], failed: Sequence[PluginIssue] = ()):
        self.name = name
        self.known = sorted(known)
        self.failed = list(failed)
        hint = ", ".join(self.known) or "none installed"
        message = f"unknown plugin {name!r} (known: {hint})" + did_you_mean(name, self.known)
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
            # a kernel refused as a duplicate leaves its plugin's other kernels loaded
            lambda i: i.origin.plugin == name and (i.stage != "duplicate" or not i.kernel),
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


FAILED_STAGES = ("import", "hook", "register", "state", "duplicate")
"""Issue stages after which a plugin's kernel names are unknown (for
``duplicate``, a plugin-wide one: an entry-point name refused, never loaded)."""


@functools.cache
def _beside_gemmreg(module: str) -> bool:
    """Whether ``module``'s top-level package lies in the folder that holds
    gemmreg's own package (site-packages, or the checkout of an editable
    install): where gemmreg's wheel puts its built-in plugins, and where a
    package that merely calls itself gemmreg cannot put its module without
    being installed as gemmreg. Found without importing it."""
    import importlib.util
    from pathlib import Path

    top = module.split(".", 1)[0]
    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        return False
    where = spec.origin if spec is not None else None
    if not where:
        return False
    package = Path(where).resolve().parent
    home = Path(__file__).resolve().parents[2]  # gemmreg/discovery/this file
    return (
        package.parent if spec is not None and spec.submodule_search_locations else package
    ) == home
