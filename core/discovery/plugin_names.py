"""Which installed entry points are gemmreg's own, and which entry-point names
two packages claim: settled before any of them is imported, never by load order.

importlib's ``entry_points()`` keeps one distribution per name, the first on
``sys.path``: a package whose METADATA says ``Name: gemmreg``, placed ahead of
gemmreg, hid gemmreg's own entry points and was taken for the built-ins. So
every distribution's entry points are read here (:func:`installed`; the same
entry point found twice, an egg-info beside an editable install, counts once),
and built-in status takes both gemmreg's distribution name and a module
installed beside gemmreg's own package (:attr:`Origin.built_in`): a name in a
METADATA file alone claims nothing.

An entry-point name is also the name a plugin is blocked and selected by, so
it follows the kernel-name rule: a built-in's cannot be taken, and one two
other packages claim loads for neither (:func:`settle`), until one of them is
blocked by ``package:name`` in ``GEMMREG_BLOCK_PLUGINS``.
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Callable, Sequence

from gemmreg.discovery.registry_records import BLOCK_ENV, Origin, PluginIssue, normalized

Candidate = tuple[Origin, Callable[..., object]]
"""A plugin to load: where it came from, and how to load it."""


def installed(group: str) -> list[importlib.metadata.EntryPoint]:
    """Every installed entry point of ``group``, from every distribution on the
    path, shadowed or not; one found twice (same package, name and target) once."""
    seen: set[tuple[str, str, str]] = set()
    found: list[importlib.metadata.EntryPoint] = []
    for dist in importlib.metadata.distributions():
        name = normalized(dist.metadata["Name"] or "")
        for entry_point in dist.entry_points:
            key = (name, entry_point.name, entry_point.value)
            if entry_point.group == group and key not in seen:
                seen.add(key)
                found.append(entry_point)
    return found


def blocked(origin: Origin, names: set[str]) -> bool:
    """Whether ``GEMMREG_BLOCK_PLUGINS`` names this plugin: by its name, or by
    ``package:name`` where two packages share the name."""
    return origin.plugin in names or (
        bool(origin.distribution) and f"{origin.distribution}:{origin.plugin}" in names
    )


def settle(candidates: Sequence[Candidate]) -> tuple[list[Candidate], list[PluginIssue]]:
    """The entry points to load, and a refusal for each the others outrank.

    Entry-point names claimed once load. Of a name claimed several times, a
    built-in loads (the first on the path, should gemmreg be there twice) and
    every other claimant is refused; a name only other packages claim is
    refused for all of them, one line each, whatever their order. Extra
    plugins (``GEMMREG_EXTRA_PLUGINS``) are named by module path and pass."""
    by_name: dict[str, list[Candidate]] = {}
    for candidate in candidates:
        by_name.setdefault(candidate[0].plugin, []).append(candidate)
    kept: list[Candidate] = []
    refused: list[PluginIssue] = []
    for name, claimants in by_name.items():
        built_in = [c for c in claimants if c[0].built_in]
        if len(claimants) == 1 or built_in:
            winner = (built_in or claimants)[0]
            kept.append(winner)
            for origin, _ in claimants:
                if origin != winner[0]:
                    reason = (
                        f"plugin name {name!r} belongs to gemmreg's built-in "
                        f"{winner[0].describe()}, which no package can replace; "
                        f"refused from {origin.describe()} (not loaded)"
                    )
                    refused.append(PluginIssue(origin=origin, stage="duplicate", reason=reason))
            continue
        claimants = sorted(claimants, key=lambda c: (c[0].package, c[0].module))
        who = " and ".join(origin.package or origin.module for origin, _ in claimants)
        for origin, _ in claimants:
            others = ",".join(f"{o.distribution}:{name}" for o, _ in claimants if o is not origin)
            reason = (
                f"plugin name {name!r} is claimed by {who}: none of them was loaded; "
                f"to load {origin.package or origin.module}'s, block the other with "
                f"{BLOCK_ENV}={others}"
            )
            refused.append(PluginIssue(origin=origin, stage="duplicate", reason=reason))
    return kept, refused
