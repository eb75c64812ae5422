"""Copy evidence files into README.md, docs/*.md and the plugins' READMEs
between markers, so every figure in them is the tool's own output, and every
quoted example the code that its tests run, never retyped:

    <!-- evidence: evidence/DIR/compare.txt -->
    ...replaced by the file's content in a code block...
    <!-- /evidence -->

Run ``python scripts/readme_evidence.py``; ``--check`` exits 1 if a page is stale.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BLOCK = re.compile(r"(<!-- evidence: (?P<path>\S+) -->\n)(?P<body>.*?)(<!-- /evidence -->)", re.S)
LANGUAGES = {".py": "python", ".toml": "toml"}
"""Code quoted whole (the example plugin) is highlighted; recorded output is not."""


def render(readme: str) -> str:
    def fill(match: re.Match[str]) -> str:
        content = (REPO / match["path"]).read_text().rstrip("\n")
        language = LANGUAGES.get(Path(match["path"]).suffix, "")
        return f"{match[1]}```{language}\n{content}\n```\n{match[4]}"

    return BLOCK.sub(fill, readme)


def pages() -> list[Path]:
    """Every page that may quote evidence."""
    return [
        REPO / "README.md",
        *sorted((REPO / "docs").glob("*.md")),
        *sorted((REPO / "plugins").glob("*/README.md")),
    ]


def main(argv: list[str]) -> int:
    stale = []
    for path in pages():
        current = path.read_text()
        wanted = render(current)
        if wanted == current:
            continue
        stale.append(path.relative_to(REPO))
        if "--check" not in argv:
            path.write_text(wanted)
    if "--check" in argv and stale:
        print(f"stale: {', '.join(str(p) for p in stale)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
