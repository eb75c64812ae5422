"""What argparse's refusal of a command, a choice or an option most likely
meant: the parser's one-line error gains :func:`gemmreg.contract.bad_input.did_you_mean`'s
guess (``gemmreg compre`` ... ``did you mean 'compare'?``)."""

from __future__ import annotations

import argparse
import re

from gemmreg.contract.bad_input import did_you_mean

_INVALID_CHOICE = re.compile(r"invalid choice: '?([^'\s]*)'? \(choose from (.*)\)")


def guess(parser: argparse.ArgumentParser, message: str) -> str:
    """What argparse's refusal of a command, a choice or an option most
    likely meant (:func:`gemmreg.contract.bad_input.did_you_mean`)."""
    invalid = _INVALID_CHOICE.search(message)
    if invalid:
        choices = [c.strip().strip("'\"") for c in invalid.group(2).split(",")]
        return did_you_mean(invalid.group(1), choices)
    if message.startswith("unrecognized arguments:"):
        options = [word for word in message.split()[2:] if word.startswith("--")]
        if options:
            return did_you_mean(options[0].split("=")[0], _option_strings(parser))
    return ""


def _option_strings(parser: argparse.ArgumentParser) -> set[str]:
    """Every long option of ``parser`` and of its subcommands: argparse
    reports a subcommand's unknown option from the top parser."""
    found = {s for s in parser._option_string_actions if s.startswith("--")}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                found |= _option_strings(sub)
    return found
