"""What the demo brain knows of a DataFrame before it writes code about it: its columns from the
kernel facts, and their dtypes once it has looked (``sales.dtypes``) in this turn.

The brain resolves column names *before* writing code, so the code names them plainly; when the
facts do not say enough (no columns listed, or which ones are numeric), the plan's first call
looks, and the code comes in the next request, as a person would work.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass
from typing import Sequence

from . import readers
from .messages import KernelView, Variable
from .step import Call, Step


def literal(text: str) -> str:
    """``text`` as a Python string literal in double quotes (the common style)."""
    return json.dumps(text, ensure_ascii=False)


def column(frame: str, name: str) -> str:
    return f"{frame}[{literal(name)}]"


@dataclass(frozen=True)
class Frame:
    """A DataFrame as the brain knows it: columns (maybe none known) and dtypes (None: not looked)."""

    name: str
    columns: tuple[str, ...] = ()
    dtypes: dict[str, str] | None = None
    looked: bool = False
    look_failed: bool = False
    taken: frozenset[str] = frozenset()
    """The notebook's variable names (the facts'): a name the code makes must not overwrite one."""

    def free_name(self, base: str) -> str:
        """``base`` ("sales_selected"), or ``base_2``, ``base_3`` … when the user has that variable."""
        names = (base if k == 1 else f"{base}_{k}" for k in range(1, len(self.taken) + 2))
        return next(n for n in names if n not in self.taken)

    def numeric(self) -> list[str]:
        return [c for c, t in (self.dtypes or {}).items() if readers.is_numeric(t)]

    def text(self) -> list[str]:
        """The columns to group by: neither numbers nor dates (grouping by each date is no grouping)."""
        return [c for c, t in (self.dtypes or {}).items() if not readers.is_numeric(t) and not readers.is_date(t)]

    def dates(self) -> list[str]:
        return [c for c, t in (self.dtypes or {}).items() if readers.is_date(t)]

    def look(self, quiet: bool = False) -> Step:
        """The call that tells the brain the columns and their types (``quiet``: a look made to
        write the next call, which the answer does not report)."""
        return Step("python", {"code": look_code(self.name)}, f"look at the columns of `{self.name}` and their types",
                    reads=(lambda out: "") if quiet else (lambda out: columns_said(self.name, out)))

    def no_column(self, to: str) -> list[Step] | str:
        """What to do when the prompt names no column of this frame "to" do something with: look
        at its columns first when they are not known, else say so (or that it is no DataFrame)."""
        if not self.columns and not self.looked:
            return [self.look(quiet=True)]
        return self.unknown() if self.look_failed else f"I could not tell which column of `{self.name}` {to}."

    def look_first(self) -> list[Step] | str:
        """What a skill answers before the columns' types are known: a quiet look at them, or, where the
        look was made and told nothing, why no code is written."""
        return [self.look(quiet=True)] if not self.looked else self.unknown()

    def unknown(self) -> str:
        if self.look_failed:
            return f"`{self.name}` does not look like a DataFrame (its `.dtypes` failed), so I wrote no pandas code for it."
        return f"I could not tell which columns of `{self.name}` you mean."


def look_code(name: str) -> str:
    return f"{name}.dtypes"


def columns_said(name: str, output: str) -> str | None:
    found = readers.dtypes(output)
    if found is None:
        return None
    listed = ", ".join(f"{c} ({t})" for c, t in found.items())
    return f"`{name}` has {len(found)} columns: {listed}"


def frame_of(name: str, view: KernelView, calls: Sequence[Call]) -> Frame:
    """What the facts and this turn's looks say about ``name``."""
    known = view.variables.get(name)
    columns = known.columns if known else ()
    taken = frozenset(view.variables) | frozenset(view.left_out)
    for call in calls:
        if call.tool == "python" and look_code(name) in call.input.values():
            found = None if call.failed else readers.dtypes(call.output)
            if found is None and not call.failed and (shown := readers.dtypes_shown(call.output)):
                # a frame of more than 60 columns: the types of those shown, every column the facts list
                return Frame(name, columns or tuple(shown), shown, looked=True, taken=taken)
            if found is None:
                return Frame(name, columns, None, looked=True, look_failed=True, taken=taken)
            return Frame(name, tuple(found), found, looked=True, taken=taken)
    return Frame(name, columns, taken=taken)


def view_with_looks(view: KernelView, calls: Sequence[Call]) -> KernelView:
    """``view`` with the columns this turn's ``.dtypes`` looks found (the facts may list none)."""
    seen = KernelView(dict(view.variables), view.last_error)
    for name in {*view.variables, *(str(c.input.get("code", "")).removesuffix(".dtypes") for c in calls if c.tool == "python")}:
        frame = frame_of(name, view, calls)
        if frame.dtypes:
            seen.variables[name] = Variable(name, "DataFrame", frame.columns)
    return seen


def matches(word: str, columns: Sequence[str]) -> str | None:
    """The column ``word`` names: the same, or its singular/plural, ignoring case."""
    w = word.lower()
    forms = (w, w.rstrip("s"), w + "s", w[:-3] + "y" if w.endswith("ies") else w)  # "categories": category
    for c in columns:  # the name as written first: "sales_region" is not a twin "sales region" (a received file's)
        if c.lower() in forms:
            return c
    for c in columns:  # a name of several words is one word in a condition: "sales region" as sales_region
        if _joined(c) in forms:
            return c
    for c in columns:  # "temperature" for temp_c, "revenues" for revenue_eur
        stem = c.lower().split("_")[0]
        if len(stem) >= 4 and w.startswith(stem) and "_" in c:
            return c
    return None


def _joined(column: str) -> str:
    """A column name of several words as one (``sales region``: ``sales_region``), lower case."""
    return re.sub(r"\s+", "_", column.lower())


def words_joined(prompt: str, columns: Sequence[str]) -> str:
    """``prompt`` with each column name of several words it says ("sales region") joined into one
    word (sales_region), the length kept, so that a condition on it reads as on one column."""
    low = prompt.lower()
    words = set(re.findall(r"\w+", low))
    # only the names whose every word is in the prompt are searched for: a scan per column of a wide
    # frame over a long prompt cost ~0.5 ms each (200 columns, 18,000 characters: ~90 ms per call)
    # A name whose joined form is another column's ("sales region" beside sales_region) is left as
    # said: joined, the condition compared the other column, the one the prompt did not name.
    taken = {c.lower() for c in columns}
    said = [c for c in columns if len(c.split()) > 1 and _joined(c) not in taken
            and all(w in words if w.isalnum() else w in low for w in c.lower().split())]
    for c in sorted(said, key=len, reverse=True):
        spaced = r"\s+".join(map(re.escape, c.split()))
        prompt = re.sub(rf"\b{spaced}\b", lambda m: re.sub(r"\s", "_", m.group(0)), prompt, flags=re.I)
    return prompt


def _operands(node: ast.expr, op: type[ast.operator], code: str) -> list[str]:
    """The code of each operand of a chain of ``op`` (``a & b & c``), each in parentheses as written."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, op):
        return [*_operands(node.left, op, code), *_operands(node.right, op, code)]
    said = ast.get_source_segment(code, node) or ""
    return [said if isinstance(node, (ast.Call, ast.Attribute, ast.Subscript, ast.Name)) else f"({said})"]


def wrapped(head: str, mask: str, tail: str) -> str:
    """``head + mask + tail`` (``orders[…]``, ``(…).sum()``), broken inside its brackets one condition
    a line when longer than 100 characters, as a person (or black) would break it."""
    code = f"{head}{mask}{tail}"
    tree = ast.parse(mask, mode="eval").body
    if len(code) <= 100 or not isinstance(tree, ast.BinOp) or not isinstance(tree.op, (ast.BitAnd, ast.BitOr)):
        return code
    sign = "&" if isinstance(tree.op, ast.BitAnd) else "|"
    lines = _operands(tree, type(tree.op), mask)
    return head + "\n    " + f"\n    {sign} ".join(lines) + "\n" + tail


def without_frame(name: str, prompt: str, columns: Sequence[str]) -> str:
    """``prompt`` without the frame's own name, so that it names no column ("the most orders in
    `orders`" is not about an ``order_date`` column); kept when a column has that very name."""
    if any(c.lower() == name.lower() for c in columns):
        return prompt
    return re.sub(rf"`?\b{re.escape(name)}\b`?", " ", prompt)


def named(prompt: str, columns: Sequence[str]) -> list[str]:
    """The columns the prompt names, in the prompt's order."""
    # each distinct word once, in the order first said: a long prompt repeats its words, and each
    # look-up compares the word with every column (an 18,000-character prompt on 200 columns: ~3,000
    # words × 200 columns, per question asked, where its ~50 distinct words suffice)
    words = dict.fromkeys(w.lower() for w in re.findall(r"\w+", prompt))
    found = (matches(w, columns) for w in words)
    return list(dict.fromkeys(c for c in found if c is not None))


__all__ = ["Frame", "column", "columns_said", "frame_of", "literal", "look_code", "matches", "named",
           "view_with_looks", "without_frame", "words_joined", "wrapped"]
