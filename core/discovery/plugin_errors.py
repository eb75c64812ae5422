"""How an error a plugin raised is told: one line for a table, whatever it
raised (``sys.exit`` and ``KeyboardInterrupt`` included, which mean something
else coming from plugin code). Apart from :mod:`gemmreg.discovery.loading`,
which uses it, so that what runs a plugin's calls outside loading
(:mod:`gemmreg.discovery.plugin_calls`, the worker) can describe them too
without importing the loader.
"""

from __future__ import annotations

from gemmreg.discovery import load_guard

REASON_CHARS = 400
"""A failure reason is one line in a table: long messages are cut to this."""


CONTAINED = {
    SystemExit: "plugin code called sys.exit",
    KeyboardInterrupt: "raised by plugin code, not a Ctrl-C",
    GeneratorExit: "raised by plugin code",
}
"""Exceptions that are not errors elsewhere, and what they mean coming from a plugin."""


def describe(error: BaseException) -> str:
    if isinstance(error, load_guard.ExitCalled):
        return str(error)  # the whole story already: who called os._exit, with what
    lines = [line.strip() for line in str(error).strip().splitlines() if line.strip()]
    text = "; ".join(lines)
    if len(text) > REASON_CHARS:
        text = text[: REASON_CHARS - 3] + "..."
    name = type(error).__name__
    meaning = next((m for kind, m in CONTAINED.items() if isinstance(error, kind)), "")
    if meaning:
        return f"{name}({text}): {meaning}" if text else f"{name}: {meaning}"
    return f"{name}: {text}" if text else name
