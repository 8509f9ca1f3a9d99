"""``%agent saw [TURN]``: the exact requests of a turn, as the model received them.

Notices the context manager put in (truncation, "[Continue assisting the user!]", replaced file
reads, a compaction's summary) are highlighted, so a reader sees at a glance what was changed or hidden.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from html import escape
from typing import Any, Sequence

from ..engine.compaction import SUMMARY_MARK
from ..engine.messages import content_blocks, tool_result_text
from ..engine.session import SentRequest

_MARKERS = ("[NOTE] Some previous conversation history", "[Continue assisting the user!]",
            "[[NOTE] This file read has been removed", SUMMARY_MARK)


def _block_text(block: dict[str, Any]) -> str:
    kind = block.get("type")
    if kind == "text":
        return block.get("text", "")
    if kind == "thinking":
        return "(thinking) " + (block.get("thinking") or "[text omitted by the API; signature kept]")
    if kind == "tool_use":
        return f"tool_use {block.get('name')} {json.dumps(block.get('input'), ensure_ascii=False)}  [{block.get('id')}]"
    if kind == "tool_result":
        content = tool_result_text(block, "\n")
        err = " (error)" if block.get("is_error") else ""
        return f"tool_result{err} [{block.get('tool_use_id')}]: {content}"
    return f"({kind})"


def _blocks(message: dict[str, Any]) -> list[str]:
    return [_block_text(b) for b in content_blocks(message) if isinstance(b, dict)]


@dataclass(frozen=True)
class SentView:
    """Displayable requests: text/plain and HTML with the context manager's notices marked."""

    sent: Sequence[SentRequest]

    def plain(self) -> str:
        out: list[str] = []
        for s in self.sent:
            tools = ", ".join(s.tools)
            out.append(f"=== request {s.request} (turn {s.turn}, {s.model}): {len(s.messages)} messages, tools {tools}")
            out.append("--- system\n" + s.system)
            for i, m in enumerate(s.messages):
                for text in _blocks(m):
                    flag = " ★" if any(k in text for k in _MARKERS) else ""
                    out.append(f"--- [{i}] {m['role']}{flag}\n{text}")
        return "\n".join(out)

    def html(self) -> str:
        parts: list[str] = []
        for s in self.sent:
            parts.append(f"<h4>Request {s.request} · turn {s.turn} · {escape(s.model)} · {len(s.messages)} messages</h4>")
            summary = f"system prompt ({len(s.system):,} chars)"
            parts.append(f"<details><summary>{summary}</summary><pre>{escape(s.system)}</pre></details>")
            for i, m in enumerate(s.messages):
                for text in _blocks(m):
                    marked = any(k in text for k in _MARKERS)
                    style = "background:#fff3cd;" if marked else ""
                    parts.append(f'<div style="{style}border-left:3px solid {"#1976d2" if m["role"] == "user" else "#888"};'
                                 f'padding:2px 6px;margin:2px 0"><b>[{i}] {m["role"]}</b>'
                                 f'<pre style="white-space:pre-wrap;margin:0">{escape(text)}</pre></div>')
        return "".join(parts)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return {"text/plain": self.plain(), "text/html": self.html()}


def render_sent(sent: Sequence[SentRequest]) -> SentView:
    """Wrap requests for display."""
    return SentView(list(sent))
