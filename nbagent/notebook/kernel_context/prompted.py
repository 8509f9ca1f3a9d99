"""A value the user typed at a hidden prompt: ``getpass.getpass("DB password")`` alone in a cell (not
assigned) shows the password as ``Out[n]``, and the kernel context's "Recent cell outputs" sent it to
the model at every prompt, though no variable names it; ``p = getpass.getpass()`` kept it under a
name no credential has, and the variables' descriptions sent it (attacker pass 21); so did
``from getpass import getpass as gp`` then ``gp()``."""

from __future__ import annotations

import re
from functools import lru_cache
from itertools import islice
from typing import Mapping

from ...engine.credentials.embedded_secrets import MAX_CHARS, MIN_CHARS, looks_like_token

_STRICT_WORDS = (r"pass(?:word|wd|phrase|code)|pwd?|secret|credentials?"
                 r"|(?:api|secret|access|private|licen[cs]e|auth|ssh|encryption|signing|client|account|storage)[ _-]?key"
                 r"|pass(?=[ \t]*[:>]?[ \t]*[\"'])")
"""Words of a prompt asking for a credential whatever its answer (``Password: ``, ``API key: ``, ``Pass: ``)."""
_CREDENTIAL_PROMPT = (r"\binput\s*\(\s*[rRbBuUfF]{0,2}[\"']{1,3}(?:[^\"'\n]*(?i:\b(?:" + _STRICT_WORDS + r")\b)"
                      r"|[^\"'\n]*(?i:\b(?P<loose>token|key)\b))")
_ASKED = re.compile(r"(?:\b[A-Za-z_]\w*\s*\.\s*)?\bgetpass\s*\(|" + _CREDENTIAL_PROMPT)
"""A hidden prompt (``getpass(…)``, ``getpass.getpass(…)``, ``gpm.getpass(…)`` after ``import getpass as
gpm``), or ``input(…)`` asking for a credential (``input("API key: ")``, ``input(\"\"\"Password: \"\"\")``)
by a whole word: ``input("Search keyword: ")`` or ``input("Keyboard layout? ")`` asks for none (their
answers were hidden from every text the model read). A bare ``key`` or ``token`` (``loose``: "Which column
is the primary key?", "Key metric: ", "Token to look up: ") gives only an answer shaped like a generated
token, as a variable named ``key`` or ``token`` does (review of atk21: ``customer_id`` was hidden)."""
_ALIAS = re.compile(r"\bfrom\s+getpass\s+import\s+(?:\([^)]*?|[^\n)]*?)\bgetpass\s+as\s+(?P<name>[A-Za-z_]\w*)"
                    r"|^[ \t]*(?P<bound>[A-Za-z_]\w*)[ \t]*=[ \t]*(?:getpass[ \t]*\.[ \t]*)?getpass[ \t]*(?:#.*)?$",
                    re.MULTILINE)
"""Another name for the hidden prompt: ``from getpass import getpass as gp`` (in parentheses over lines too),
``ask = getpass.getpass``."""
_ASSIGNED = (r"(?:^[ \t]*(?P<name>[A-Za-z_]\w*)[ \t]*(?::[^=\n]{1,80})?=|(?<![\w.])(?P<walrus>[A-Za-z_]\w*)[ \t]*:=)"
             r"[ \t]*")
"""A variable the prompt's answer goes to: ``p = getpass.getpass()``, ``entered: str = input("Password: ")``,
``if (p := getpass.getpass()):``."""
_CALLS = (re.compile(r"input\s*\("), re.compile(r"getpass\s*\("))
"""A cell calling a prompt: only those are searched for an assignment of its answer (a notebook's
cells name ``input_ids`` or ``inputs`` often: searching each took 16 ms a read for 5,000 cells).
Each starts with its literal, which the regular expression engine finds fast; an alternation of
them, or a leading ``\\b``, made it scan character by character (20 ms)."""
MAX_CELLS = 200
"""The newest cells with a value, or assigning one, looked at."""
MAX_ALIAS_CELLS = 5_000
"""The newest cells searched for another name of ``getpass`` at the first read (then only new ones)."""
_scanned: list[object] = [None, 0, frozenset(), None]
"""The ``In`` list last searched for aliases, how many of its cells, the aliases found and the last cell
searched: ``In`` only grows, and searching thousands of cells at every read (each prompt, each serve
reply) took ~5 ms. ``%reset`` empties the same list: its last cell searched is then another one."""


def _aliases(cells: list[object]) -> frozenset[str]:
    """The other names ``getpass`` goes by in the cells (new cells only, after the first read)."""
    seen, done, found, last = _scanned
    if (seen is not cells or not isinstance(done, int) or not 0 < done <= len(cells) or cells[done - 1] is not last
            or not isinstance(found, frozenset)):
        done, found = max(0, len(cells) - MAX_ALIAS_CELLS), frozenset()
    new = {m.group("name") or m.group("bound") for cell in cells[done:]
           if type(cell) is str and "getpass" in cell for m in _ALIAS.finditer(cell)} - {"getpass"}
    found = found | new if new else found
    _scanned[:] = [cells, len(cells), found, cells[-1] if cells else None]
    return found


def _patterns(cells: list[object]) -> tuple[re.Pattern[str], re.Pattern[str], tuple[re.Pattern[str], ...]]:
    """The prompt's call, an assignment of its answer, and a call of a prompt by any of its names."""
    aliases = _aliases(cells)
    if not aliases:
        return _ASKED, re.compile(f"{_ASSIGNED}(?:{_ASKED.pattern})", re.MULTILINE), _CALLS
    names = "|".join(sorted(map(re.escape, aliases)))
    asked = re.compile(rf"{_ASKED.pattern}|(?<![\w.])(?:{names})\s*\(")
    calls = (*_CALLS, *(re.compile(rf"{re.escape(alias)}\s*\(") for alias in sorted(aliases)))
    return asked, re.compile(f"{_ASSIGNED}(?:{asked.pattern})", re.MULTILINE), calls


def _text(value: object) -> bool:
    return type(value) is str and MIN_CHARS <= len(value) <= MAX_CHARS


def _answer(match: re.Match[str], value: object) -> bool:
    """Whether ``value`` is the answer of the prompt ``match`` found, as a credential: any text for a
    password's prompt; one shaped like a generated token for a bare ``key``/``token`` prompt's."""
    return _text(value) and (match.group("loose") is None or looks_like_token(value))  # type: ignore[arg-type]


@lru_cache(maxsize=256)
def _rebinding(name: str) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """``name`` as a word (a literal first: fast), and a line binding it anew: an assignment (in a tuple
    too: ``p, q = …``), a ``for`` loop's target, ``with … as p``, ``p := …``; after it the variable holds
    no prompt's answer (review of atk21: ``for s in df.columns`` after ``s = getpass()`` hid the last
    column's name everywhere)."""
    n, item = re.escape(name), r"\*?[\w.\[\]]+"
    return re.compile(rf"{n}\b"), re.compile(
        rf"^[ \t]*(?:(?:async[ \t]+)?for[ \t][\w \t,()*\[\].]*?(?<![\w.]){n}\b[\w \t,()*\[\].]*?[ \t]in\b"
        rf"|\(?[ \t]*(?:{item}[ \t]*,[ \t]*)*\*?{n}\b[ \t]*(?:,[ \t]*{item}[ \t]*)*,?[ \t]*\)?[ \t]*"
        rf"(?::[^=\n]{{1,80}})?=(?!=))|\bas[ \t]+{n}\b|(?<![\w.]){n}[ \t]*:=", re.MULTILINE)


def _rebound(name: str, source: str, start: int = 0) -> bool:
    """Whether a line of ``source`` after ``start`` binds ``name`` anew (:func:`_rebinding`): only the
    lines naming it are matched (one pattern over 200 cells of 60 lines each took 150 ms)."""
    word, binding = _rebinding(name)
    line_end = -1
    for m in word.finditer(source, start):
        at = m.start()
        if at <= line_end or at and (source[at - 1].isalnum() or source[at - 1] in "_."):
            continue
        line_end = source.find("\n", at) % (len(source) + 1)
        if binding.search(source, source.rfind("\n", 0, at) + 1, line_end) and not _local(source, at):
            return True  # a function's own variable of that name binds nothing of the namespace's
    return False


_SCOPE = re.compile(r"[ \t]*(?:async[ \t]+)?(?:def|class)[ \t]")


def _local(source: str, at: int) -> bool:
    """Whether the line of ``at`` is inside a ``def`` (or ``class``) of the cell: a name bound there is
    the function's own, not the namespace's variable (review of atk21: ``def login():\\n    p =
    getpass()`` made an older ``p = "north-region"`` a password; ``def f(x):\\n    p = x`` ended ``p``'s)."""
    lines = source[:at].split("\n")
    indent = len(lines[-1]) - len(lines[-1].lstrip())
    for line in reversed(lines[:-1]):
        if line.strip() and (depth := len(line) - len(line.lstrip())) < indent:
            if _SCOPE.match(line):
                return True
            indent = depth
    return False


def _assigned_answers(user_ns: Mapping[str, object], cells: list[object], assigned: re.Pattern[str],
                      calls: tuple[re.Pattern[str], ...]) -> list[str]:
    """The values of variables whose newest binding (in the newest cells) is a prompt's answer:
    ``p = "plain text"`` in a later cell (or line) holds no password any more."""
    recent = [cell for cell in islice(reversed(cells), MAX_CELLS) if type(cell) is str]  # newest first
    found: list[str] = []
    for i, source in enumerate(recent):
        if not any(call.search(source) for call in calls):
            continue
        for m in assigned.finditer(source):
            group = "name" if m.group("name") else "walrus"
            name = m.group(group)
            if _local(source, m.start(group)) or _rebound(name, source, m.end()) or \
                    any(_rebound(name, newer) for newer in recent[:i]):
                continue
            if _answer(m, value := user_ns.get(name)):
                found.append(value)  # type: ignore[arg-type]
    return found


def prompted_secrets(user_ns: Mapping[str, object]) -> tuple[str, ...]:
    """The text values of the cells whose last line asks for a credential at a prompt, and of the
    variables a newer cell gave such a prompt's answer to (while they still hold a text)."""
    out, cells = user_ns.get("Out"), user_ns.get("In")
    if type(cells) is not list:
        return ()
    asked, assigned, calls = _patterns(cells)
    found: list[str] = []
    shown: dict[object, object] = out if type(out) is dict else {}
    for n in islice(sorted((k for k in shown if type(k) is int), reverse=True), MAX_CELLS):
        value, source = shown[n], cells[n] if 0 <= n < len(cells) else None
        if not isinstance(value, str) or not _text(value) or type(source) is not str:
            continue
        last = next((line for line in reversed(source.splitlines()) if line.strip()), "")
        if (m := asked.search(last)) is not None and _answer(m, value):
            found.append(value)
    found += _assigned_answers(user_ns, cells, assigned, calls)
    return tuple(dict.fromkeys(found))


__all__ = ["prompted_secrets"]
