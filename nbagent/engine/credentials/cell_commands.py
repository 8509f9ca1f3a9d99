"""Where a notebook cell's code may hold a command line's credential: which cells to tokenize for
flags (:func:`command_marked`), the shell commands of a cell's saved source (:func:`shell_lines`),
and a literal's escapes read (:func:`unescaped`), for :mod:`.kernel_secrets`; the rules the commands
are read by are :mod:`.flag_secrets`'.
"""

from __future__ import annotations

import re

from .flag_secrets import ORACLE_TOOLS

_ESCAPE = re.compile(r"\\([nt\\])")
_ESCAPES = {"n": "\n", "t": "\t"}

_COMMAND_MARKS = ("--", "-u", "vault ", "configure set", "/user:")
_SHORT_MARK = re.compile(r"""-(?:[pPD]|a[\s"'])""")


def command_marked(code: str, low: str) -> bool:
    """Whether a cell's code (``low``: lower-cased) may hold a command line's credential in its literals:
    ``--password=``, curl's ``-u``, a short flag (``-p``, sqlcmd's ``-P``, Java's ``-D``, redis-cli's ``-a``)
    after a blank, a quote or a literal's ``\\n`` (``1-p``, ``y-pred`` are arithmetic), or Oracle's
    ``sqlplus scott/…@orcl``. A cell without them is not tokenized for flags (500 pandas cells naming
    ``key=`` took 5 times as long at the first prompt; 5,000 cells computing ``1-p`` 1.2 s, not 0.24)."""
    return any(mark in code for mark in _COMMAND_MARKS) or any(
        not m.start() or code[m.start() - 1] in " \t\n\"'" or code[m.start() - 2:m.start()] == "\\n"
        for m in _SHORT_MARK.finditer(code)) or ("@" in code and any(tool in low for tool in ORACLE_TOOLS))


_SHELL_LINE = re.compile(r"^[ \t]*(?:[\w.]+[ \t]*=[ \t]*)?(?:!|%(?:sx|system)[ \t])(?P<line>[^\n]+)", re.MULTILINE)
_SHELL_CELL = ("%%bash", "%%sh", "%%script", "%%system", "%%!")


def shell_lines(code: str) -> list[str]:
    """A notebook cell's shell commands as its saved source has them: ``!mysql -p…``, ``files = !ls``,
    ``%sx …``, a ``%%bash`` cell's body (IPython makes them literals only when it runs the cell, so a
    cell not run yet, a received notebook's, showed its password)."""
    if code.lstrip().startswith(_SHELL_CELL):
        return [code.lstrip().partition("\n")[2]]
    return [m.group("line") for m in _SHELL_LINE.finditer(code)] if "!" in code or "%s" in code else []


def unescaped(literal: str) -> str:
    """A code literal's text with its ``\\n``, ``\\t`` and ``\\\\`` read: a ``%%bash`` cell's lines are one
    literal (``'mysql -h db \\\\\\n-p…'``), whose flags start a line only so."""
    return _ESCAPE.sub(lambda m: _ESCAPES.get(m.group(1), m.group(1)), literal) if "\\" in literal else literal


__all__ = ["command_marked", "shell_lines", "unescaped"]
