"""The demo brain's closing texts: the answer after its tool calls, and a compaction's summary.

Model text is rendered as Markdown, where consecutive lines join into one paragraph: a tool's
output (a table, a traceback) is therefore quoted in a fenced block, so it keeps its lines.
"""

from __future__ import annotations

import re
from typing import Sequence

from .messages import text_of
from .step import Call, Plan, Step
from .validation import RequestBody

PREFIX = "(simulated model)"
MAX_OUTPUT_CHARS = 1_200
MAX_OUTPUT_LINES = 25


def fenced(text: str, info: str = "") -> str:
    """``text`` in a Markdown code fence longer than any backtick run inside it."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{text}\n{fence}"


def _shortened(text: str) -> str:
    """At most :data:`MAX_OUTPUT_LINES` whole lines and about :data:`MAX_OUTPUT_CHARS` characters."""
    lines = text.splitlines()
    kept: list[str] = []
    size = 0
    for line in lines[:MAX_OUTPUT_LINES]:
        if kept and size + len(line) > MAX_OUTPUT_CHARS:
            break
        kept.append(line[:MAX_OUTPUT_CHARS])
        size += len(line) + 1
    if len(kept) < len(lines):
        kept.append(f"… ({len(lines) - len(kept)} more line(s))")
    return "\n".join(kept)


def _closing(p: Plan, calls: Sequence[Call]) -> str:
    """The cell the answer ends with: only if the last call (the one that ran it) succeeded."""
    if not p.code:
        return ""
    if calls and calls[-1].failed:
        return ("The corrected cell still failed (see its output above), so I have no working code to offer: "
                "I only fix misspelt names.")
    return "The corrected cell, which ran without an error:\n" + fenced(p.code, "python")


def _read(calls: Sequence[Call], p: Plan) -> list[tuple[str | None, bool]]:
    """What each call's output says, read by the step that planned it: a sentence, "" when the
    plan's lead already says it, None when only the output itself can say it; and whether the
    output is quoted anyway (a table the sentence only counts)."""
    unread: dict[str, list[Step]] = {}
    for planned_step in p.steps:
        unread.setdefault(planned_step.key, []).append(planned_step)
    said: list[tuple[str | None, bool]] = []
    for call in calls:
        planned = unread.get(call.key) or []
        step = planned.pop(0) if planned else None
        reader = None if step is None else (step.on_error if call.failed else step.reads)
        said.append((reader(call.output) if reader is not None else None, step is not None and step.shows))
    return said


def answer(calls: Sequence[Call], p: Plan) -> str:
    """The plan's conclusion and what the calls' outputs say; then the outputs that say more than
    a sentence (a table, a file) or that failed, each in a fence. An output the answer states in
    words is not repeated: it is in the tool card and in the cell below the agent cell."""
    said = _read(calls, p)
    found = [s for s, _ in said if s]
    lead = " ".join(s for s in (p.lead, "; ".join(found) + "." if found else "") if s)
    lines = [f"{PREFIX} {lead}"] if lead else []
    shown = [c for c, (s, quoted) in zip(calls, said, strict=True) if s is None or quoted or c.failed]
    if shown:
        lines.append("Here is what the tools returned:" if lines else f"{PREFIX} Here is what the tools returned:")
    for call in shown:
        text = call.output.strip("\n").rstrip() or "(no output)"  # keep a table header's indent
        verb = "failed" if call.failed else "returned"
        lines += [f"`{call.tool}` {verb}:", fenced(_shortened(text))]
    closing = _closing(p, calls)
    return "\n\n".join(lines + ([closing] if closing else [])) or f"{PREFIX} Done."


_HEADER = re.compile(r"^--- message (\d+) \((\w+)\) ---$", re.M)


def simulated_summary(request: RequestBody) -> str:
    """A deterministic stand-in for a summary: the first line of each summarised message."""
    messages = request.get("messages")
    text = text_of(messages[-1].get("content")) if messages else ""
    parts = _HEADER.split(text)
    lines = [f"{PREFIX} Summary (simulated: the first line of each earlier message):"]
    for i in range(1, len(parts) - 2, 3):
        first = next((ln.strip() for ln in parts[i + 2].splitlines() if ln.strip()), "(empty)")
        lines.append(f"- {parts[i + 1]} {parts[i]}: {first[:160]}")
    return "\n".join(lines)


__all__ = ["PREFIX", "answer", "fenced", "simulated_summary"]
