"""A refused name comes with the nearest known one: commands, options,
plugins, dtypes, layouts, sanitizer tools and shapes-file fields, in the one
line and exit 2 every bad input gets; no guess where nothing is close."""

from __future__ import annotations

import pytest
from gemmreg.contract.bad_input import did_you_mean

PAIR = ["compare", "torch_ref", "triton_grouped"]


@pytest.mark.parametrize(
    ("argv", "guess"),
    [
        (["compre", "torch_ref", "triton_grouped"], "did you mean 'compare'?"),
        (["chekc"], "did you mean 'check'?"),
        (["compare", "torch_rf", "triton_grouped"], "did you mean 'torch_ref'"),
        (["check", "triton_tunde"], "did you mean 'triton_tuned'"),
        (["bench", "torch_ref", "--shape", "64", "--procesess", "3"], "did you mean '--processes'"),
        ([*PAIR, "--max-tme", "3"], "did you mean '--max-time'"),
        (["check", "--verbsoe"], "did you mean '--verbose'"),
        ([*PAIR, "--dtype", "fp61"], "did you mean 'fp16'?"),
        (["check", "--layout", "rowmjor"], "did you mean 'rowmajor'?"),
        (["check", "torch_ref", "--sanitize=racechek"], "did you mean 'racecheck'"),
        ([*PAIR, "--l2", "dirt"], "did you mean 'dirty'?"),
    ],
)
def test_a_typo_is_answered_with_the_name_meant(cli_offline, argv, guess):
    outcome = cli_offline(*argv)
    outcome.assert_refused()
    assert guess in outcome.err


@pytest.mark.parametrize(
    "argv",
    [["frobnicate"], ["check", "nope"], [*PAIR, "--dtype", "complex64"]],
)
def test_nothing_is_guessed_where_nothing_is_close(cli_offline, argv):
    outcome = cli_offline(*argv)
    outcome.assert_refused()
    assert "did you mean" not in outcome.err


@pytest.mark.parametrize(
    ("argv", "answer"),
    [
        (
            ["check", "triton_tuned", "--shape", "64"],
            "check takes no --shape (compare, bench take it)",
        ),
        (["list", "--verbose"], "list takes no --verbose (check takes it)"),
    ],
)
def test_an_option_of_another_command_is_named_as_such(cli_offline, argv, answer):
    """argparse refuses a command's unknown option from the top parser; the
    answer says which commands take it, not "did you mean" the same option."""
    outcome = cli_offline(*argv)
    outcome.assert_refused()
    assert answer in outcome.err and "did you mean" not in outcome.err


def test_a_typo_is_matched_against_the_named_commands_options_alone(cli_offline):
    """check takes no --processes: a near miss of it gets no guess from bench's."""
    outcome = cli_offline("check", "--procesess", "3")
    outcome.assert_refused()
    assert "--processes" not in outcome.err


def test_the_guess_is_the_closest_known_name_or_nothing():
    assert did_you_mean("compre", ["list", "check", "compare", "bench"]) == (
        "; did you mean 'compare'?"
    )
    assert did_you_mean("xyz", ["list", "check"]) == ""
    assert did_you_mean("fp61", ["fp32", "fp16", "bf16"]) == "; did you mean 'fp16'?"
