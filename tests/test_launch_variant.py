"""``gemmreg.variant``: a plugin names the code its launch runs, the core
records the name for every timed process, and ``report --kernels`` shows it.
The name's rules, what the core makes of a launch that names nothing or
nonsense, triton_tuned's own names, and one comparison on the CPU that
carries them into a saved run and back."""

from __future__ import annotations

import csv
import functools
import io

import gemmreg
import pytest
from gemmreg.contract.launch_variant import ATTRIBUTE, LONGEST, launch_variant
from gemmreg.reporting import render_kernels, runs


def launch(a, b, out):  # a stand-in: never called here
    raise AssertionError("not called")


def test_the_name_rides_on_the_launch_itself():
    def mine(a, b, out):
        return None

    assert gemmreg.variant(mine, " tiled:64x64x32 ") is mine  # no wrapper, no cost a call
    assert launch_variant(mine) == "tiled:64x64x32"
    partial = functools.partial(launch)
    assert launch_variant(gemmreg.variant(partial, "partial")) == "partial"
    assert launch_variant(launch) == ""  # named nothing


@pytest.mark.parametrize("name", ["", "   ", "two\nlines", "x" * (LONGEST + 1), 7])
def test_a_name_that_is_not_one_short_line_is_refused(name):
    def mine(a, b, out):
        return None

    with pytest.raises(ValueError, match="one line"):
        gemmreg.variant(mine, name)
    assert launch_variant(mine) == ""


def test_a_launch_that_takes_no_attributes_is_refused_with_what_to_do():
    class Kernel:
        def run(self, a, b, out):
            return None

    with pytest.raises(TypeError, match="return a function"):
        gemmreg.variant(Kernel().run, "bound")


def test_the_core_keeps_only_a_short_string():
    """A launch is the plugin's object: whatever it carries under the name,
    the record holds a short string or nothing."""

    def mine(a, b, out):
        return None

    for carried, kept in ((["a"], ""), ("y" * (LONGEST + 1), ""), ("ok", "ok")):
        setattr(mine, ATTRIBUTE, carried)
        assert launch_variant(mine) == kept


def test_a_cpu_comparison_records_each_plugins_name_per_process(tmp_path):
    """triton_tuned names its interpreted config on every launch; torch_ref
    names nothing. Both survive the saved run and show in ``--kernels``."""
    result = gemmreg.compare(
        ["torch_ref", "triton_tuned"],
        shape=(16, 24, 32),
        dtype="fp32",
        processes=2,
        repeats=3,
        out=tmp_path / "run",
    )
    tuned, reference = result.kernel("triton_tuned"), result.kernel("torch_ref")
    assert tuned.status == reference.status == "timed"
    assert len(tuned.variants) == 1 and tuned.variants[0].startswith("tiled:")
    assert reference.variants == ()
    _, saved, _ = runs.load_run(tmp_path / "run")
    rows = list(csv.DictReader(render_kernels.kernel_table(saved, "csv").splitlines()))
    by_kernel = {row["kernel"]: row for row in rows}
    assert by_kernel["triton_tuned"]["variants"] == tuned.variants[0]
    assert by_kernel["torch_ref"]["variants"] == ""
    table = render_kernels.kernel_table(saved, "table")
    assert table.splitlines()[0].split()[:4] == ["shape", "dtype", "plugin", "variant"]
    assert tuned.variants[0] in table
    summary = {
        row["kernel"]: row
        for row in csv.DictReader(io.StringIO((tmp_path / "run" / "summary.csv").read_text()))
    }
    assert summary["triton_tuned"]["variants"] == tuned.variants[0]
    assert summary["torch_ref"]["variants"] == ""


@pytest.mark.parametrize(
    ("name", "instead"),
    [
        ("tiled:64x64x32-s4-w4", None),
        ("split_k:64x16x128-s4-w4-k4-swap", None),
        ("gemv:16x1x512-s3-w4-k1", None),
        ("tma_split_k:64x64x128-s6-w4-k2", "split_k:64x64x128-s6-w4-g8-k2"),
        ("persistent_tma:128x256x64-s4-w8-flat-split", "tiled:128x128x32-s4-w4-g8"),
        ("gluon_ws:128x128x64-s5-w4", "tiled:128x128x32-s4-w4-g8"),
    ],
)
def test_triton_tuned_names_what_runs_for_operands_its_path_cannot_take(name, instead):
    """The name a tuned launch carries says its config and, for the paths
    that hand operands TMA cannot take to another kernel, which one."""
    from gemmreg_plugins.triton_tuned import launchers
    from gemmreg_plugins.triton_tuned.launch_config import Config

    fallback = Config.from_name("tiled:128x128x32-s4-w4")
    found = launchers.taken_instead(Config.from_name(name), fallback)
    assert (found.name if found else None) == instead
