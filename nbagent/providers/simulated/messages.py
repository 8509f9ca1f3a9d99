"""Reading a Messages API request the way the demo brain needs it: the text of messages, the
user's own words, tool results, and what the kernel facts say about the notebook.

The notebook layer sends kernel facts as ``<kernel-state>`` text blocks in prompt messages: a full
snapshot first, then only the changes. Replaying them in order gives the brain the variables it can
see (with a DataFrame's columns) and the last failed cell, which is all it knows of the notebook.
"""

from __future__ import annotations

import ast
import re
import textwrap
from dataclasses import dataclass, field, replace
from typing import Mapping, Sequence

from nbagent.engine.loop.facts import FACTS_TAG
from nbagent.engine.loop.structured import INSTRUCTION, RETRY, schema_in_instruction
from nbagent.engine.state.compactions import SUMMARY_MARK

from ...engine.contracts.json_types import JSONObject
from .step import Call

Block = Mapping[str, object]
"""A content block of a request (validated: an object with a ``type``)."""
MessageLike = Mapping[str, object]
"""A message of a request (a :class:`~nbagent.engine.contracts.messages.MessageParam`, or JSON of its shape)."""


def _blocks(content: object, kind: str) -> list[Block]:
    """The blocks of ``kind`` of a message's list content (none for string content)."""
    if not isinstance(content, (list, tuple)):
        return []
    return [b for b in content if isinstance(b, Mapping) and _is(b, kind)]


def _is(block: Block, kind: str) -> bool:
    match block:
        case {"type": str(found)}:
            return found == kind
    return False


def text_of(content: object, results: bool = True) -> str:
    """The text of a message's content; with ``results`` False, tool results are left out."""
    if isinstance(content, str):
        return content
    parts = []
    for block in content if isinstance(content, (list, tuple)) else ():
        match block:
            case {"type": "text"}:
                parts.append(str(block.get("text", "")))
            case {"type": "tool_result"} if results:
                parts.append(text_of(block.get("content", "")))
    return "\n".join(parts)


# Blocks the loop adds to a prompt's message that are context, not the user's words: a compaction's
# summary, and kernel facts sent as ``<kernel-state>`` blocks (newer loops send them that way).
_NOT_THE_PROMPT = (SUMMARY_MARK, f"<{FACTS_TAG}")


def _text_blocks(message: MessageLike) -> list[str]:
    content = message.get("content")
    if isinstance(content, str):
        return [content]
    return [str(b.get("text", "")) for b in _blocks(content, "text")]


def prompt_text(message: MessageLike) -> str:
    """The user's words in a message: its text blocks, without the loop's structured-output asks,
    a compaction's summary or kernel facts (which share the message of the prompt)."""
    if isinstance(message.get("content"), str):
        return str(message["content"])
    return "\n".join(t for t in _text_blocks(message) if not t.startswith((INSTRUCTION, RETRY, *_NOT_THE_PROMPT)))


def output_schema(message: MessageLike) -> JSONObject | None:
    """The JSON schema a prompt's message asks the final answer to match (structured output), or None."""
    for text in _text_blocks(message):
        schema = schema_in_instruction(text)
        if schema is not None:
            return schema
    return None


def tool_results(message: MessageLike) -> list[Block]:
    return _blocks(message.get("content"), "tool_result")


def tool_names(message: MessageLike) -> dict[str, str]:
    """Tool-use id -> tool name, for the tool calls of an assistant message."""
    return {str(b.get("id")): str(b.get("name")) for b in _blocks(message.get("content"), "tool_use")}


def calls_in(messages: Sequence[MessageLike]) -> list[Call]:
    """The tool calls of ``messages`` in order, each with the text of its result (calls not
    answered yet are left out)."""
    results = {str(r.get("tool_use_id")): r for m in messages if m.get("role") == "user" for r in tool_results(m)}
    calls = []
    for m in messages:
        if m.get("role") != "assistant":
            continue
        for b in _blocks(m.get("content"), "tool_use"):
            if str(b.get("id")) in results:
                r = results[str(b.get("id"))]
                tool_input = b.get("input") or {}
                calls.append(Call(str(b.get("name")), dict(tool_input) if isinstance(tool_input, Mapping) else {},
                                  text_of(r.get("content", "")), bool(r.get("is_error"))))
    return calls


@dataclass(frozen=True)
class Variable:
    """A user variable as the kernel facts describe it."""

    name: str
    type: str
    columns: tuple[str, ...] = ()
    described: str = ""
    """The facts' indented lines under it (an object's ``_repr_llm_`` text, a figure's axes), joined."""


@dataclass
class KernelView:
    """What the brain knows of the notebook: its variables (in the facts' order) and the last error."""

    variables: dict[str, Variable] = field(default_factory=dict)
    last_error: str | None = None
    empty: dict[str, str] = field(default_factory=dict)
    """Variables the facts call empty: a figure's "EMPTY" axes line, a DataFrame's "(no rows)"."""
    left_out: set[str] = field(default_factory=set)
    """Variables the facts name only ("Left out (…): a, b and 3 more"): still the user's, so a name the
    code makes is never one of them (``sales_selected`` of a notebook of many frames was overwritten)."""

    def frames(self) -> list[Variable]:
        """The variables with columns (DataFrames), in the facts' order."""
        return [v for v in self.variables.values() if v.columns]


# "  - name: type (summary)": only the name, the type and a "columns [...]" list are read; anything
# else the summary says (dtypes, samples) is left alone, and what is not read here the brain asks
# the kernel for with a tool call.
_VARIABLE = re.compile(r"^  - ([A-Za-z_]\w*): ([\w.]+)\b(.*)$")
_COLUMNS = re.compile(r"columns:? (\[(?:'[^']*'|\"[^\"]*\"|[^\]'\"])*\])")


def _variable(line: str) -> Variable | None:
    m = _VARIABLE.match(line)
    if not m:
        return None
    columns: tuple[str, ...] = ()
    cols = _COLUMNS.search(m.group(3) or "")
    if cols:
        try:
            columns = tuple(str(c) for c in ast.literal_eval(cols.group(1)))
        except (ValueError, SyntaxError):  # a column label whose repr is not a literal
            columns = ()
    return Variable(m.group(1), m.group(2), columns)


# "Left out (why; ask for them): a, b and 12 more": the names follow the last "): " (no name has a parenthesis)
_LEFT_OUT = re.compile(r"^Left out \(.*\)(?::|$)|\band [\d,]+ more$")
_LEFT_OUT_NAMES = re.compile(r"[A-Za-z_]\w*")


def _read_facts(text: str, view: KernelView) -> None:
    """Apply one ``<kernel-state>`` block (a snapshot or a diff) to ``view``."""
    # "\n" only, as facts.py joins them: splitlines() also breaks at \r, U+2028, \x85 in a cell's text,
    # and a received cell's "\u2028Left out (…): zz" replaced the facts' own line
    lines = text.split("\n")
    if text.startswith(f"<{FACTS_TAG}>"):  # a full snapshot; a diff leaves unmentioned names as they were
        view.variables.clear()
        view.empty.clear()
        view.left_out.clear()
    current: str | None = None  # the variable the indented lines below it describe
    # what the model is told of an object it cannot inspect by its repr (`_repr_llm_`): collected,
    # then set once (a new Variable per line took 94 ms for 4,000 lines of facts, each request)
    told: dict[str, list[str]] = {}
    for i, line in enumerate(lines):
        var = _variable(line)
        if var is not None:
            view.variables[var.name] = var
            view.empty.pop(var.name, None)  # described again: empty only if these lines say so
            current = var.name
            told[current] = []
        elif current is not None and line.startswith("    ") and ("EMPTY" in line or line.strip() == "(no rows)"):
            view.empty[current] = line.strip()
        elif current is not None and line.startswith("    "):
            told[current].append(line.strip())
        elif not line.startswith("    "):
            # the variable's block ends here: a recent cell's indented code ("      return 2") or a
            # traceback's lines are not its description (`m`'s answer quoted another cell's code)
            current = None
            _read_section(lines, i, view)
    for name, said in told.items():
        if said and name in view.variables:
            view.variables[name] = replace(view.variables[name], described="\n".join(said))


def _read_section(lines: list[str], i: int, view: KernelView) -> None:
    """Line ``i`` of the facts, outside the variables' blocks: what it says of the notebook, if anything."""
    line = lines[i]
    if line.startswith("Left out ("):  # a diff says it only when it changed: it replaces the last
        view.left_out = set(_LEFT_OUT_NAMES.findall(_LEFT_OUT.sub("", line)))
    elif line.startswith("Removed variables: "):
        for name in line[len("Removed variables: "):].split(", "):
            view.variables.pop(name.strip(), None)
            view.empty.pop(name.strip(), None)
    elif line.startswith("Last error"):
        block = []
        for more in lines[i + 1:]:
            if not more.startswith("  "):
                break
            block.append(more)
        view.last_error = textwrap.dedent("\n".join(block))


def kernel_view(messages: Sequence[MessageLike]) -> KernelView:
    """The notebook as the kernel facts of ``messages`` describe it, the newest facts last."""
    view = KernelView()
    for m in messages:
        if m.get("role") != "user":
            continue
        for text in _text_blocks(m):
            if text.startswith(f"<{FACTS_TAG}"):
                _read_facts(text, view)
    return view


__all__ = ["KernelView", "Variable", "calls_in", "kernel_view", "prompt_text", "text_of", "tool_names", "tool_results"]
