"""A ``--shapes`` file's text and what its JSON or YAML says, read strictly.

A shapes file is input, and the parsers' defaults read more into it than it
says. YAML 1.1 (PyYAML's ``safe_load``) takes ``010`` for 8 (octal), ``1:30``
for 90 (base 60), ``0x10`` and ``1_6`` for 16: a row would time another shape
than the one written. Its anchors and aliases let 600 bytes stand for
billions of list items (each alias a reference, each repr or ``str`` a copy),
and nothing in a list of rows needs them. JSON and YAML keep the last of two
equal keys in a mapping, so ``{"m": 16, ..., "m": 32}`` times 32 without a
word. So:

- YAML numbers are decimal only, as CSV cells and the options are
  (:mod:`gemmreg.contract.options`): a scalar YAML 1.1 reads as a number is
  refused where it is not ASCII digits (an integer without a leading zero;
  a float with a point and an optional exponent), so ``010``, ``1:30``,
  ``0x10``, ``1_6`` and ``.inf`` are refused where they stand, not read as
  other numbers. ``true``, ``yes``, dates and ``<<`` are text; ``null`` and
  ``~`` are an absent value.
- A YAML anchor or alias is refused where it appears, before anything is
  built from it.
- JSON's ``NaN`` and ``Infinity``, and a number too large for a float
  (``1e400``), are refused.
- A mapping that names a key twice, in either format, is read as a
  :class:`RepeatedKeys` naming it, which the row's check refuses with the
  file and row (:mod:`gemmreg.timing.shape_rows`).
- The file is read only when ``stat`` says it is a regular file of at most
  :data:`MAX_SHAPES_BYTES` (a FIFO would wait forever for a writer,
  ``/dev/zero`` would fill the memory), as ``report`` reads a saved run
  (:mod:`gemmreg.contract.saved_files`).
"""

from __future__ import annotations

import functools
import json
import math
import re
from pathlib import Path
from typing import Any, ClassVar

from gemmreg.contract.options import UsageError
from gemmreg.contract.saved_files import UnreadableFile, read_saved, why

MAX_SHAPES_BYTES = 4 << 20
"""The most a shapes file may hold: 1000 rows (a bench's most points) of
a few hundred bytes each, with room for comments, is under 1 MB."""
YAML_MISSING = "reading YAML needs PyYAML: pip install pyyaml (or give the shapes as JSON or CSV)"

INT_TAG, FLOAT_TAG = "tag:yaml.org,2002:int", "tag:yaml.org,2002:float"
_YAML_INT = re.compile(r"[-+]?(?:0|[1-9][0-9]*)")
"""What a YAML integer may be: no leading zero (YAML 1.1's octal), no ``_``,
``:``, ``0x`` or ``0b``."""
_YAML_FLOAT = re.compile(r"[-+]?(?:[0-9]+\.[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")


class RepeatedKeys(dict[Any, Any]):
    """A mapping of the file that names :attr:`repeated` more than once
    (its values are the first of each key's)."""

    repeated: Any = None


def read_text(path: Path) -> str:
    """``path``'s text: a regular file of at most :data:`MAX_SHAPES_BYTES`,
    UTF-8; UsageError (one line) for anything else."""
    try:
        raw = read_saved(path, MAX_SHAPES_BYTES)
    except UnreadableFile as error:
        reason = _reason(path, str(error))
        joined = " " if reason.startswith("is ") else ": "
        raise UsageError(f"--shapes {str(path)!r}{joined}{reason}") from None
    except OSError as error:  # FileNotFoundError, passed through by read_saved
        raise UsageError(f"--shapes {str(path)!r}: cannot read it: {why(error)}") from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise UsageError(f"--shapes {str(path)!r}: cannot read it: {error}") from None


def _reason(path: Path, line: str) -> str:
    """``read_saved``'s line without its leading path (the caller names it),
    and its size limit in the words of a shapes file."""
    line = line.removeprefix(f"{path} ").removeprefix(f"cannot read {path}: ")
    if line.startswith("holds more than"):
        return (
            f"larger than {MAX_SHAPES_BYTES >> 20} MB, more than any list of shapes: refused unread"
        )
    return line


def load_json(path: Path, text: str) -> Any:
    try:
        return json.loads(
            text,
            object_pairs_hook=_mapping,
            parse_constant=_no_constant,
            parse_float=_finite_float,
        )
    except ValueError as error:  # JSONDecodeError, and the hooks' refusals
        raise UsageError(f"--shapes {str(path)!r}: not valid JSON: {error}") from None
    except RecursionError:
        raise UsageError(f"--shapes {str(path)!r}: not valid JSON: nested too deep") from None


def load_yaml(path: Path, text: str) -> Any:
    try:
        import yaml
    except ImportError:
        raise UsageError(f"--shapes {str(path)!r}: {YAML_MISSING}") from None
    try:
        return yaml.load(text, Loader=_strict_loader())  # a SafeLoader
    except (yaml.YAMLError, RecursionError, ValueError) as error:
        first = " ".join(str(error).split()).replace(' in "<unicode string>",', " at")
        raise UsageError(f"--shapes {str(path)!r}: not valid YAML: {first}") from None


def _mapping(pairs: list[tuple[Any, Any]]) -> dict[Any, Any]:
    """One mapping from its pairs in order: the first value of each key,
    and :class:`RepeatedKeys` where a key comes again."""
    mapping: dict[Any, Any] = {}
    repeated = None
    for key, value in pairs:
        if key in mapping:
            repeated = key if repeated is None else repeated
            continue
        mapping[key] = value
    if repeated is None:
        return mapping
    marked = RepeatedKeys(mapping)
    marked.repeated = repeated
    return marked


def _no_constant(name: str) -> float:
    raise ValueError(f"{name} is not a number a shapes file takes")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text[:40]} is too large a number")
    return value


@functools.cache
def _strict_loader() -> Any:
    """PyYAML's SafeLoader, with decimal numbers only, no anchors or aliases,
    and repeated keys marked (made once, on the first YAML file: PyYAML is
    optional)."""
    import yaml
    from yaml.composer import ComposerError
    from yaml.constructor import ConstructorError

    kept = ("tag:yaml.org,2002:null", INT_TAG, FLOAT_TAG)

    class StrictLoader(yaml.SafeLoader):
        yaml_implicit_resolvers: ClassVar[dict[Any, Any]] = {
            first: [(tag, pattern) for tag, pattern in resolvers if tag in kept]
            for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
        }

        def compose_node(self, parent: Any, index: Any) -> Any:
            event = self.peek_event()
            if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
                raise ComposerError(
                    None,
                    None,
                    "anchors and aliases (&name, *name) are not taken in a shapes file: "
                    "write each row out",
                    event.start_mark,
                )
            return super().compose_node(parent, index)

        def construct_mapping(self, node: Any, deep: bool = False) -> Any:
            if not isinstance(node, yaml.MappingNode):
                raise ConstructorError(None, None, "expected a mapping", node.start_mark)
            pairs = [
                (self.construct_object(key, deep=True), self.construct_object(value, deep=deep))
                for key, value in node.value
            ]
            if not all(isinstance(key, (str, int, float, type(None))) for key, _ in pairs):
                raise ConstructorError(
                    None, None, "a mapping's keys must be plain names", node.start_mark
                )
            return _mapping(pairs)

        def construct_decimal(self, node: Any) -> int | float:
            text = self.construct_scalar(node)
            plain = _YAML_INT if node.tag == INT_TAG else _YAML_FLOAT
            if not plain.fullmatch(text) or len(text) > 1000:
                raise ConstructorError(
                    None,
                    None,
                    f"{text[:40]!r} is not a plain decimal number (YAML 1.1 reads 010 as 8, "
                    "1:30 as 90, 1_6 as 16): write ASCII digits only",
                    node.start_mark,
                )
            return int(text) if node.tag == INT_TAG else float(text)

    StrictLoader.add_constructor(INT_TAG, StrictLoader.construct_decimal)
    StrictLoader.add_constructor(FLOAT_TAG, StrictLoader.construct_decimal)
    StrictLoader.add_constructor("tag:yaml.org,2002:map", _construct_map)
    return StrictLoader


def _construct_map(loader: Any, node: Any) -> Any:
    return loader.construct_mapping(node)
