"""scripts/probes/tf32_ncu.py's ``compare``: the committed ``compare.txt`` of
its Nsight Compute evidence is what the script prints from the committed
details pages (no figure in it was typed), and it reads a plain export as a
gzipped one."""

from __future__ import annotations

import gzip
import importlib.util
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
EVIDENCE = REPO / "evidence" / "2026-12-05-h100-tf32-cycles-and-clocks"


def probe():
    spec = importlib.util.spec_from_file_location("tf32_ncu", REPO / "scripts/probes/tf32_ncu.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_committed_comparison_is_the_scripts_output():
    details = [EVIDENCE / f"tf32-{size}-details.csv.gz" for size in (8192, 4096)]
    printed = "\n\n".join(probe().compare(path) for path in details)
    assert printed + "\n" == (EVIDENCE / "compare.txt").read_text()


def test_a_plain_export_reads_as_the_gzipped_one(tmp_path):
    plain = tmp_path / "tf32-8192-details.csv"
    plain.write_bytes(gzip.decompress((EVIDENCE / "tf32-8192-details.csv.gz").read_bytes()))
    found = probe().read_details(plain)
    assert len(found) == 2
    gluon = next(metrics for name, metrics in found.items() if "gluon" in name)
    cublas = next(metrics for name, metrics in found.items() if "xmma" in name)
    assert gluon["Cluster Size"][0] == "0" and cublas["Cluster Size"][0] == "2"
    assert found == probe().read_details(EVIDENCE / "tf32-8192-details.csv.gz")
