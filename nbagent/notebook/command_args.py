"""How a ``%agent`` command's arguments are parsed and explained: from the parser IPython's
``magic_arguments`` (or ``cell_options``) put on the command, so ``--help``, ``%agent help`` and a
bad argument's one-line ``UsageError`` all come from the same declarations."""

from __future__ import annotations

from argparse import Namespace

from IPython.core.error import UsageError
from IPython.core.magic_arguments import MagicArgumentParser
from IPython.utils.process import arg_split
from IPython.utils.text import dedent

HELP_FLAGS = ("-h", "--help")


def parser_of(command: object) -> MagicArgumentParser:
    """The parser ``magic_arguments`` (or ``cell_options``) put on a command or the cell magic."""
    parser = getattr(command, "parser", None)
    if not isinstance(parser, MagicArgumentParser):
        raise TypeError(f"{command!r} declares no magic arguments")
    return parser


def usage_line(command: object) -> str:
    """``%agent rollback TURN``: the usage IPython's formatter generates, without its rst prefix."""
    return str(parser_of(command).format_usage()).replace("::", "").strip()


def help_text(command: object) -> str:
    """A command's whole help (usage, description, arguments), from its declarations."""
    text = str(parser_of(command).format_help()).replace("::", "", 1).strip("\n")
    return "usage: " + dedent(text).strip()


def short_usage(command: object) -> str:
    """The usage line, or ``PROG [options]`` when the options would not fit the overview's column."""
    line = " ".join(usage_line(command).split())
    return line if len(line) <= 60 else f"%{parser_of(command).prog} [options]"


def parse(command: object, argstring: str) -> Namespace | None:
    """Parse a command's arguments; ``--help`` prints its help and returns None. A bad argument is
    a ``UsageError`` with the usage line (IPython shows it in one line and the cell fails)."""
    try:
        argv = arg_split(argstring, strict=True)
    except ValueError as exc:  # an unclosed quote
        raise UsageError(f"{exc} — usage: {usage_line(command)}") from None
    if any(a in HELP_FLAGS for a in argv):
        print(help_text(command))
        return None
    try:
        return parser_of(command).parse_args(argv)
    except UsageError as exc:
        raise UsageError(f"{exc} — usage: {usage_line(command)}") from None


__all__ = ["HELP_FLAGS", "help_text", "parse", "parser_of", "short_usage", "usage_line"]
