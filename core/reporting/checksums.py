"""A saved document's content checksum: what was written is what is read.

The schema check (:mod:`gemmreg.reporting.run_schema`) refuses a saved run that
cannot be right; it cannot refuse one that is well formed but not what
gemmreg wrote: one sample changed by hand, a verdict's word swapped. So each
saved document (``run.json``, ``check.json``) carries, in a field of its own,
the sha256 of its content, and reading it back verifies it.

The checksum is over the *parsed* document, serialised canonically (keys
sorted, no whitespace, ASCII: :func:`canonical`), without the checksum's own
field. So it does not depend on how the file is laid out or stored: the
packed ``run.json.xz`` kept as evidence verifies like the plain file, and a
file re-indented by a tool still does, while any changed value does not.
Documents saved before checksums have none: they read as before, with a note.
"""

from __future__ import annotations

import enum
import hashlib
import json
from collections.abc import Mapping

CHECKSUM_KEY = "content_sha256"
"""The field holding the checksum, at the top level of the document."""


class Seal(enum.Enum):
    """What reading a document found of its checksum."""

    VERIFIED = "verified"
    ABSENT = "saved before checksums"
    MISMATCH = "content does not match its checksum"


def canonical(data: object) -> bytes:
    """The document as the checksum hashes it: JSON, keys sorted, no spaces,
    ASCII only (a reader in another language can rebuild it)."""
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return text.encode("ascii")


def digest(data: Mapping[str, object]) -> str:
    """The sha256 (hex) of ``data`` without its checksum field."""
    body = {key: value for key, value in data.items() if key != CHECKSUM_KEY}
    return hashlib.sha256(canonical(body)).hexdigest()


def sealed(text: str) -> str:
    """The JSON object ``text`` (as the writer made it), with its checksum added
    as the last field. It is computed from ``text`` parsed, so what a reader
    parses is exactly what was hashed."""
    data = json.loads(text, parse_constant=str)  # as gemmreg's reader parses it
    if not isinstance(data, dict):
        raise TypeError("only a JSON object can carry a checksum")
    body = {key: value for key, value in data.items() if key != CHECKSUM_KEY}
    return json.dumps({**body, CHECKSUM_KEY: digest(body)}, indent=2)


def check(data: Mapping[str, object]) -> Seal:
    """Whether the parsed document ``data`` is what its checksum says: a
    checksum that is not a string counts as a mismatch (it was edited too)."""
    if CHECKSUM_KEY not in data:
        return Seal.ABSENT
    recorded = data[CHECKSUM_KEY]
    if isinstance(recorded, str) and recorded == digest(data):
        return Seal.VERIFIED
    return Seal.MISMATCH


def unsealed(data: Mapping[str, object]) -> dict[str, object]:
    """``data`` without its checksum field, for the schema check."""
    return {key: value for key, value in data.items() if key != CHECKSUM_KEY}
