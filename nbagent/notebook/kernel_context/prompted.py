"""A value the user typed at a hidden prompt: ``getpass.getpass("DB password")`` alone in a cell (not
assigned) shows the password as ``Out[n]``, and the kernel context's "Recent cell outputs" sent it to
the model at every prompt, though no variable names it; ``p = getpass.getpass()`` kept it under a
name no credential has, and the variables' descriptions sent it (attacker pass 21); so did
``from getpass import getpass as gp`` then ``gp()``."""

from __future__ import annotations

import re
from itertools import islice
from typing import Mapping

from ...engine.loop.embedded_secrets import MAX_CHARS, MIN_CHARS

_CREDENTIAL_PROMPT = (r"\binput\s*\(\s*[rRbBuUfF]{0,2}[\"']{1,3}[^\"'\n]*"
                      r"(?i:\b(?:pass(?:word|wd|phrase|code)?|pwd?|secret|token|(?:api[ _-]?)?key|credentials?)\b)")
_ASKED = re.compile(r"(?:\bgetpass\s*\.\s*)?\bgetpass\s*\(|" + _CREDENTIAL_PROMPT)
"""A hidden prompt (``getpass(…)``), or ``input(…)`` asking for a credential (``input("API key: ")``,
``input(\"\"\"Password: \"\"\")``) by a whole word: ``input("Search keyword: ")`` or ``input("Keyboard
layout? ")`` asks for none (their answers were hidden from every text the model read)."""
_ALIAS = re.compile(r"\bfrom\s+getpass\s+import\s+\(?[^\n)]*?\bgetpass\s+as\s+(?P<name>[A-Za-z_]\w*)"
                    r"|^[ \t]*(?P<bound>[A-Za-z_]\w*)[ \t]*=[ \t]*(?:getpass[ \t]*\.[ \t]*)?getpass[ \t]*(?:#.*)?$",
                    re.MULTILINE)
"""Another name for the hidden prompt: ``from getpass import getpass as gp``, ``ask = getpass.getpass``."""
_ASSIGNED = r"^[ \t]*(?P<name>[A-Za-z_]\w*)[ \t]*(?::[^=\n]{1,80})?=[ \t]*"
"""A variable the prompt's answer goes to: ``p = getpass.getpass()``, ``entered: str = input("Password: ")``."""
_ANY_ASSIGNMENT = re.compile(_ASSIGNED + r"(?!=)")
MAX_CELLS = 200
"""The newest cells with a value, or assigning one, looked at."""
MAX_ALIAS_CELLS = 5_000
"""The newest cells searched for another name of ``getpass`` (only those naming it are read)."""


def _patterns(cells: list[object]) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """The prompt's call, and an assignment of its answer, with the names ``getpass`` goes by here."""
    aliases = {m.group("name") or m.group("bound") for cell in islice(reversed(cells), MAX_ALIAS_CELLS)
               if type(cell) is str and "getpass" in cell for m in _ALIAS.finditer(cell)} - {"getpass"}
    asked = _ASKED if not aliases else re.compile(
        rf"{_ASKED.pattern}|(?<![\w.])(?:{'|'.join(sorted(map(re.escape, aliases)))})\s*\(")
    return asked, re.compile(f"{_ASSIGNED}(?:{asked.pattern})", re.MULTILINE)


def _text(value: object) -> bool:
    return type(value) is str and MIN_CHARS <= len(value) <= MAX_CHARS


def _assigned_answers(user_ns: Mapping[str, object], cells: list[object], assigned: re.Pattern[str]) -> list[str]:
    """The values of variables whose newest assignment (in the newest cells) is a prompt's answer:
    ``p = "plain text"`` in a later cell (or line) holds no password any more."""
    found: list[str] = []
    newer: set[str] = set()  # names assigned after the line looked at
    for source in islice(reversed(cells), MAX_CELLS):
        if type(source) is not str or "=" not in source:
            continue
        for line in reversed(source.splitlines()):
            if (m := _ANY_ASSIGNMENT.match(line)) is None:
                continue
            name = m.group("name")
            if name not in newer and assigned.match(line) and _text(value := user_ns.get(name)):
                found.append(value)  # type: ignore[arg-type]
            newer.add(name)
    return found


def prompted_secrets(user_ns: Mapping[str, object]) -> tuple[str, ...]:
    """The text values of the cells whose last line asks for a credential at a prompt, and of the
    variables a newer cell gave such a prompt's answer to (while they still hold a text)."""
    out, cells = user_ns.get("Out"), user_ns.get("In")
    if type(cells) is not list:
        return ()
    asked, assigned = _patterns(cells)
    found: list[str] = []
    shown: dict[object, object] = out if type(out) is dict else {}
    for n in islice(sorted((k for k in shown if type(k) is int), reverse=True), MAX_CELLS):
        value, source = shown[n], cells[n] if 0 <= n < len(cells) else None
        if not isinstance(value, str) or not _text(value) or type(source) is not str:
            continue
        last = next((line for line in reversed(source.splitlines()) if line.strip()), "")
        if asked.search(last):
            found.append(value)
    found += _assigned_answers(user_ns, cells, assigned)
    return tuple(dict.fromkeys(found))


__all__ = ["prompted_secrets"]
