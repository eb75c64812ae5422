"""What argparse's refusal of a command, a choice or an option most likely
meant: the parser's one-line error gains :func:`gemmreg.contract.bad_input.did_you_mean`'s
guess (``gemmreg compre`` ... ``did you mean 'compare'?``)."""

from __future__ import annotations

import argparse
import re

from gemmreg.contract.bad_input import did_you_mean

_INVALID_CHOICE = re.compile(r"invalid choice: '?([^'\s]*)'? \(choose from (.*)\)")


def guess(parser: argparse.ArgumentParser, message: str, command: str | None = None) -> str:
    """What argparse's refusal of a command, a choice or an option most
    likely meant (:func:`gemmreg.contract.bad_input.did_you_mean`). An
    unknown option is matched against the options of ``command`` (the one the
    line named) alone; one that other commands take says which they are."""
    invalid = _INVALID_CHOICE.search(message)
    if invalid:
        choices = [c.strip().strip("'\"") for c in invalid.group(2).split(",")]
        return did_you_mean(invalid.group(1), choices)
    if message.startswith("unrecognized arguments:"):
        options = [word for word in message.split()[2:] if word.startswith("--")]
        if options:
            return _option_guess(parser, options[0].split("=")[0], command)
    return ""


def _option_guess(parser: argparse.ArgumentParser, option: str, command: str | None) -> str:
    commands = _commands(parser)
    if command not in commands:
        return did_you_mean(option, _long_options(parser))
    taken_by = [name for name, sub in commands.items() if option in _long_options(sub)]
    if taken_by:
        verb = "takes" if len(taken_by) == 1 else "take"
        return f"; {command} takes no {option} ({', '.join(taken_by)} {verb} it)"
    return did_you_mean(option, _long_options(commands[command]))


def _commands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """Each command's own parser, by name."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _long_options(parser: argparse.ArgumentParser) -> set[str]:
    return {s for s in parser._option_string_actions if s.startswith("--")}
