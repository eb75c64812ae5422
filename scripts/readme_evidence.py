"""Copy evidence files into README.md between markers, so every figure in the
README is the tool's own output, never retyped:

    <!-- evidence: evidence/DIR/compare.txt -->
    ...replaced by the file's content in a code block...
    <!-- /evidence -->

Run ``python scripts/readme_evidence.py``; ``--check`` exits 1 if the README is stale.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BLOCK = re.compile(r"(<!-- evidence: (?P<path>\S+) -->\n)(?P<body>.*?)(<!-- /evidence -->)", re.S)


def render(readme: str) -> str:
    def fill(match: re.Match[str]) -> str:
        content = (REPO / match["path"]).read_text().rstrip("\n")
        return f"{match[1]}```\n{content}\n```\n{match[4]}"

    return BLOCK.sub(fill, readme)


def main(argv: list[str]) -> int:
    path = REPO / "README.md"
    current = path.read_text()
    wanted = render(current)
    if "--check" in argv:
        return 0 if wanted == current else 1
    path.write_text(wanted)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
