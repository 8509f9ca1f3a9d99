"""The demo brain's ``%agent fix`` skill: a failed cell whose error is a misspelt name.

It reads the failure (``In[n] raised Kind: message``, the cell's source, the traceback) from the
prompt, or from the kernel facts' last error when the user asks why a cell failed. Names come only
from the cell's source and the kernel facts, never from the traceback: its frames are library
files (``pandas/core/frame.py`` is not a variable ``frame``).

A KeyError or AttributeError on a DataFrame is matched against that DataFrame's columns, a
NameError against the user's variables, with :func:`difflib.get_close_matches`. When one is close,
the brain names the typo, runs the corrected cell with the python tool (so ``--insert-code`` gets
code that ran) and ends with it; otherwise it says what it sees and that it cannot guess.
"""

from __future__ import annotations

import ast
import difflib
import keyword
import re
from dataclasses import dataclass

from .columns import literal
from .messages import KernelView, Variable
from .step import Plan, Step

_FAILURE = re.compile(r"^In\[(?P<cell>[^\]]*)\] raised (?P<kind>[\w.]+): (?P<message>[^\n]*)\n"
                      r"(?P<source>.*?)^Traceback \(most recent call last\):", re.M | re.S)
# "error" alone is not enough: "the standard error of df" is no question about the last failed cell.
_ASKS_ABOUT_AN_ERROR = re.compile(r"\b(fix|fail(?:ed|s|ing)?|wrong|broken|traceback)\b"
                                  r"|\b(?:the|this|that|my|last)\s+(?:error|exception)\b", re.I)
# Names a newcomer uses before importing them (a restarted kernel forgets the import cell).
_IMPORTS = {"pd": "import pandas as pd", "np": "import numpy as np", "plt": "import matplotlib.pyplot as plt"}
_NAME_ERROR = re.compile(r"name '(\w+)' is not defined")
_NO_ATTRIBUTE = re.compile(r"'(\w+)' object has no attribute '(\w+)'")


@dataclass(frozen=True)
class Failure:
    """A failed cell: its number, exception type and message, and its source."""

    cell: str
    kind: str
    message: str
    source: str
    where: str = ""
    """How the answer names the cell ("cell [3] (id a1b2)"); ``In[cell]`` when empty."""

    def said(self) -> str:
        return f"{self.where or f'In[{self.cell}]'} failed with {self.kind}: {self.message}"


def quotes_a_failure(prompt: str) -> bool:
    """Whether the prompt carries a failed cell (what ``%agent fix`` sends)."""
    return _FAILURE.search(prompt) is not None


def failure_in(prompt: str, view: KernelView) -> Failure | None:
    """The failure the prompt is about: one quoted in it, else the facts' last error if it asks."""
    m = _FAILURE.search(prompt)
    if m is None and view.last_error and _ASKS_ABOUT_AN_ERROR.search(prompt):
        m = _FAILURE.search(view.last_error + "\n")
    if m is None:
        return None
    return Failure(m["cell"], m["kind"].rsplit(".", 1)[-1], m["message"].strip(), m["source"].strip())


def _key(message: str) -> str:
    """The key of a KeyError's message (its repr: ``'regoin'``)."""
    try:
        return str(ast.literal_eval(message))
    except (ValueError, SyntaxError):
        return message.strip("'\"")


def _frames_used(source: str, view: KernelView) -> list[Variable]:
    """The DataFrames the cell names (all the known ones if it names none)."""
    used = [v for v in view.frames() if re.search(rf"\b{re.escape(v.name)}\b", source)]
    return used or view.frames()


def _closest(wrong: str, options: list[str]) -> str | None:
    found = difflib.get_close_matches(wrong, [o for o in options if o != wrong], n=1, cutoff=0.6)
    return found[0] if found else None


def _column_fix(failure: Failure, wrong: str, pattern: str, view: KernelView) -> Plan:
    """A missing column: the closest column of the DataFrames the cell uses, put where ``pattern``
    (with ``{}`` for the name) found the wrong one."""
    frames = _frames_used(failure.source, view)
    if not frames:
        return Plan(lead=f"{failure.said()}. I see no DataFrame in the notebook to compare '{wrong}' with, "
                         "so I cannot tell which name you meant.")
    where = " or ".join(f"`{f.name}`" for f in frames)
    for frame in frames:
        right = _closest(wrong, list(frame.columns))
        if right is not None:
            lead = (f"{failure.said()}: {where} has no column '{wrong}'. It looks like a typo for "
                    f"'{right}', the closest of its columns ({', '.join(frame.columns)}).")
            return _corrected(failure, lead, pattern, wrong, right, checked=True)
    columns = "; ".join(f"`{f.name}`: {', '.join(f.columns)}" for f in frames)
    return Plan(lead=f"{failure.said()}: {where} has no column '{wrong}', and none of its columns is "
                     f"close to it ({columns}), so I cannot guess which one you meant.")


def _corrected(failure: Failure, lead: str, pattern: str, wrong: str, right: str, *, checked: bool = False) -> Plan:
    """Run the cell with ``right`` in place of ``wrong`` and offer it (when the cell spells it so;
    ``checked``: ``right`` is a column's name, maybe a received file's, and the corrected cell must
    mean the user's with only that name changed, :func:`_only_renamed`)."""
    regex = pattern.format(re.escape(wrong))
    fixed = re.sub(regex, lambda m: _spelt(m.group(0), wrong, right, _prefix(failure.source, m.start())), failure.source)
    if fixed == failure.source:
        return Plan(lead=lead + f" The cell does not spell '{wrong}' out, so correct it where it is made.")
    if checked and not _only_renamed(failure.source, fixed, wrong, right, regex):
        return Plan(lead=lead + f" I did not rewrite your cell: written where it names '{wrong}', the column's name "
                                f"({literal(right)}) would change more of the cell than that name, so put it in by hand.")
    step = Step("python", {"code": fixed}, f"run your cell with '{right}' in place of '{wrong}' to check the fix")
    return Plan([step], lead=lead, code=fixed)


def _prefix(source: str, at: int) -> str:
    """The string prefix (``f``, ``rb``, …) right before ``source[at]``, lower case ("" if none)."""
    letters = re.search(r"[A-Za-z]*$", source[:at])
    word = letters.group(0).lower() if letters else ""
    return word if len(word) <= 2 and set(word) <= set("rbuf") else ""


def _spelt(found: str, wrong: str, right: str, prefix: str = "") -> str:
    """``found`` (``'wrong'``, ``.wrong`` or a variable's name) naming ``right`` as Python reads it. ``right`` is a column
    of the user's data, maybe a received file's: spliced in as it is, a quote in it ended the string
    (``'total',print('PWNED'),'``) and the corrected cell ran what the column's name spelt."""
    if found.startswith("."):  # df.regin: an attribute only where the name is one, else indexed
        return found.replace(wrong, right) if right.isidentifier() and not keyword.iskeyword(right) \
            else f"[{literal(right)}]"
    if found[:1] in ("'", '"') and "f" in prefix:  # f'…': a brace in the name would be a field, run as code
        right = right.replace("{", "{{").replace("}", "}}")
    if found[:1] in ("'", '"') and (found[0] in right or "\\" in right or not right.isprintable()):
        return literal(right)  # a literal of its own, in double quotes (after an f, its braces doubled above)
    return found.replace(wrong, right)  # a variable's name (an identifier), or a string it can be written in


# In a cell Python cannot parse (an IPython %magic or !shell line), a name is written in only where it
# can end no string and start no field or shell expansion, whatever surrounds it.
_PLAIN = re.compile(r"[\w .-]+")


def _only_renamed(source: str, fixed: str, wrong: str, right: str, regex: str) -> bool:
    """Whether ``fixed`` means ``source`` with only the column ``wrong`` renamed ``right``. The name is
    written where the cell spells ``wrong``, also inside another string (a label, ``"sum of 'regoin'"``):
    a quote in the name ended that string and the rest ran (``"+str(print('PWNED'))+"``), as did an
    f-string's field; the parsed cells are compared, so no spelling of the name can add code."""
    try:
        before, after = ast.parse(source), ast.parse(fixed)
    except (SyntaxError, ValueError):
        plain = right.isidentifier() and not keyword.iskeyword(right) if regex.startswith("\\.") else _PLAIN.fullmatch(right)
        return bool(plain)
    return ast.dump(_Renamed(wrong, right, regex).visit(before)) == ast.dump(after)


class _Renamed(ast.NodeTransformer):
    """A parsed cell as the typo fix means it: the column ``wrong`` (a key, or ``df.wrong``) is
    ``right``, and a string that spells it (``regex``) spells ``right`` there."""

    def __init__(self, wrong: str, right: str, regex: str) -> None:
        self.wrong, self.right, self.regex = wrong, right, regex

    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        if not isinstance(node.value, str):
            return node
        value = self.right if node.value == self.wrong else \
            re.sub(self.regex, lambda m: m.group(0).replace(self.wrong, self.right), node.value)
        return ast.Constant(value)

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        self.generic_visit(node)
        if node.attr != self.wrong or not self.regex.startswith("\\."):
            return node
        if self.right.isidentifier() and not keyword.iskeyword(self.right):
            return ast.Attribute(node.value, self.right, node.ctx)
        return ast.Subscript(node.value, ast.Constant(self.right), node.ctx)


def _name_fix(failure: Failure, wrong: str, view: KernelView) -> Plan:
    """An undefined name: a missing import of a usual alias, else the closest variable."""
    if wrong in _IMPORTS and wrong not in view.variables:
        fixed = f"{_IMPORTS[wrong]}\n\n{failure.source}"
        return Plan([Step("python", {"code": fixed}, f"run your cell after `{_IMPORTS[wrong]}`")], code=fixed,
                    lead=f"{failure.said()}: `{wrong}` is used before `{_IMPORTS[wrong]}` ran in this kernel.")
    right = _closest(wrong, list(view.variables))
    if right is None:
        return Plan(lead=f"{failure.said()}. No variable in the notebook is close to `{wrong}`: define it "
                         "(or run the cell that does) first.")
    lead = f"{failure.said()}: there is no variable `{wrong}`; it looks like a typo for `{right}`."
    return _corrected(failure, lead, r"(?<![\w.]){}\b", wrong, right)


_INDEXED = re.compile(r"(?<![\w.])([A-Za-z_]\w*)\s*(?:\[|\.)")


def frames_to_look_at(failure: Failure, view: KernelView) -> list[str]:
    """For a missing column: the names the cell indexes whose columns the facts do not list (the
    brain looks at their ``.dtypes`` before it compares names)."""
    if failure.kind not in ("KeyError", "AttributeError") or _frames_used(failure.source, view):
        return []
    named = dict.fromkeys(_INDEXED.findall(failure.source))
    return [n for n in named if n not in _IMPORTS and (n in view.variables or not view.variables)][:2]


def fix_plan(failure: Failure, view: KernelView) -> Plan:
    """What the brain does about ``failure`` (see the module docstring)."""
    if failure.kind == "KeyError":
        return _column_fix(failure, _key(failure.message), r"(['\"]){}\1", view)
    attribute = _NO_ATTRIBUTE.search(failure.message)
    if failure.kind == "AttributeError" and attribute and attribute.group(1) in ("DataFrame", "Series"):
        return _column_fix(failure, attribute.group(2), r"\.{}\b", view)
    name = _NAME_ERROR.search(failure.message)
    if failure.kind == "NameError" and name:
        return _name_fix(failure, name.group(1), view)
    return Plan(lead=f"{failure.said()}. I am a simulated rule set, not a language model: I can only fix "
                     "misspelt column and variable names and missing imports, so I cannot fix this one.")


__all__ = ["Failure", "failure_in", "fix_plan", "frames_to_look_at", "quotes_a_failure"]
