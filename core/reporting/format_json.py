"""``--format json``: one object, ``{"schema": N, "kind": "gemmreg.<kind>",
...}`` with the records under a key (docs/formats.md lists each kind and
its keys); a run's is what ``run.json`` holds, and loads again."""

from __future__ import annotations

from typing import ClassVar

from gemmreg.contract.serialization import SCHEMA_KEY, dumps
from gemmreg.reporting.formats import Document, DocumentFormatter, Writes, register

KIND_KEY = "kind"
"""The key naming what a JSON document holds, beside its schema version."""
KIND_PREFIX = "gemmreg."
"""Every kind is namespaced: a document found on its own says whose it is."""


@register
class JsonFormat(DocumentFormatter):
    name: ClassVar[str] = "json"
    rank: ClassVar[int] = 3
    writes: ClassVar[Writes] = "records"

    def document(self, document: Document) -> str:
        """Its schema version and kind first, then the records."""
        records = document.records()
        return dumps(
            {SCHEMA_KEY: document.schema, KIND_KEY: KIND_PREFIX + document.kind, **records}
        )
