"""``%agent saw [TURN]``: the exact requests of a turn, as the model received them.

Notices the context manager put in (truncation, "[Continue assisting the user!]", replaced file
reads, a compaction's summary) are highlighted, so a reader sees at a glance what was changed or hidden.
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass
from html import escape
from typing import Sequence

from ..display.format import terminal_text
from ..display.html import NO_TEX
from ..engine.context.mask import PLACEHOLDER
from ..engine.context.request import ORPHANED_RESULTS_NOTICE, RESULT_MISSING
from ..engine.contracts.messages import ContentBlock, MessageParam, tool_result_text
from ..engine.state.compactions import SUMMARY_MARK
from ..engine.state.sent import SentRequest

# Every text the context manager put in place of what the history holds: a masked result's
# placeholder and what stands for the results of hidden calls were left unmarked.
_MARKERS = ("[NOTE] Some previous conversation history", "[Continue assisting the user!]",
            "[[NOTE] This file read has been removed", SUMMARY_MARK, PLACEHOLDER.split("{", 1)[0],
            ORPHANED_RESULTS_NOTICE, RESULT_MISSING)


def _block_text(block: ContentBlock) -> str:
    if block["type"] == "text":
        return block.get("text", "")
    if block["type"] == "thinking":
        return "(thinking) " + (block.get("thinking") or "[text omitted by the API; signature kept]")
    if block["type"] == "tool_use":
        return f"tool_use {block.get('name')} {json.dumps(block.get('input'), ensure_ascii=False)}  [{block.get('id')}]"
    if block["type"] == "tool_result":
        content = tool_result_text(block, "\n")
        err = " (error)" if block.get("is_error") else ""
        return f"tool_result{err} [{block.get('tool_use_id')}]: {content}"
    if block["type"] == "image":
        from .kernel_context.told import image_tokens

        tokens = image_tokens(block)
        return f"(image, ~{tokens:,} tokens)" if tokens else "(image)"
    return f"({block['type']})"


def _blocks(message: MessageParam) -> list[str]:
    content = message.get("content", "")
    # A string is one text block, even an empty one (as sent); a list as is.
    return [content] if isinstance(content, str) else [_block_text(b) for b in content if isinstance(b, dict)]


# Bounds: a turn of many requests used to put every request in full into the notebook (14 MiB
# for one 10-request turn). One block shows at most BLOCK_CHARS; the whole view at most TOTAL_CHARS.
BLOCK_CHARS = 4_000
TOTAL_CHARS = 200_000


def _clip(text: str, limit: int = BLOCK_CHARS) -> str:
    return text if len(text) <= limit else text[:limit] + f" … ({len(text) - limit:,} more chars)"


@dataclass(frozen=True)
class Item:
    """One line of the view: ``sign`` is "" (shown in full), "+" (added), "-" (removed) or "=" (a
    note about unchanged parts); ``head`` labels it, ``text`` is its (clipped) content."""

    sign: str
    head: str
    text: str = ""

    @property
    def marked(self) -> bool:
        return any(k in self.text for k in _MARKERS)


def _message_lines(s: SentRequest) -> list[tuple[str, str]]:
    return [(f"[{i}] {m['role']}", text) for i, m in enumerate(s.messages) for text in _blocks(m)]


def _full(s: SentRequest) -> list[Item]:
    items = [Item("", "system", _clip(s.system))]
    return items + [Item("", head, _clip(text)) for head, text in _message_lines(s)]


def _diff(prev: SentRequest, s: SentRequest) -> list[Item]:
    """What changed from ``prev`` to ``s``, block by block (the model's reply and new tool
    results are added; truncation removes from the front)."""
    items = [Item("=", "system unchanged")] if s.system == prev.system else [Item("+", "system", _clip(s.system))]
    old, new = _message_lines(prev), _message_lines(s)
    matcher = difflib.SequenceMatcher(a=[t for _, t in old], b=[t for _, t in new], autojunk=False)
    for op, a0, a1, b0, b1 in matcher.get_opcodes():
        if op == "equal":
            items.append(Item("=", f"{a1 - a0} block(s) unchanged ({new[b0][0]} … {new[b1 - 1][0]})"))
            continue
        items += [Item("-", head, _clip(text)) for head, text in old[a0:a1]]
        items += [Item("+", head, _clip(text)) for head, text in new[b0:b1]]
    return items


def _title(s: SentRequest, prev: SentRequest | None) -> str:
    how = "in full" if prev is None else f"changes from request {prev.request}"
    return f"request {s.request} (turn {s.turn}, {s.model}): {len(s.messages)} messages, tools {', '.join(s.tools)} — {how}"


def _sections(sent: Sequence[SentRequest]) -> list[tuple[str, list[Item]]]:
    """The first request in full, then each later one as a diff from the one before, within
    TOTAL_CHARS (the rest are named, not shown)."""
    out: list[tuple[str, list[Item]]] = []
    used = 0
    for k, s in enumerate(sent):
        prev = sent[k - 1] if k else None
        items = _full(s) if prev is None else _diff(prev, s)
        size = sum(len(i.text) + len(i.head) for i in items)
        if out and used + size > TOTAL_CHARS:
            rest = ", ".join(str(r.request) for r in sent[k:])
            out.append((f"output bounded at {TOTAL_CHARS:,} chars: request(s) {rest} not shown "
                        f"(nbagent.session().saw(turn) has them all)", []))
            break
        used += size
        out.append((_title(s, prev), items))
    return out


@dataclass(frozen=True)
class SentView:
    """Displayable requests: text/plain and HTML with the context manager's notices marked; the
    first request in full, the others as changes from the one before, bounded in size."""

    sent: Sequence[SentRequest]

    def plain(self) -> str:
        out: list[str] = []
        for title, items in _sections(self.sent):
            out.append(f"=== {title}")
            for i in items:
                flag = " ★" if i.marked else ""
                sign = f"{i.sign} " if i.sign else ""
                out.append(f"--- {sign}{i.head}{flag}" + (f"\n{i.text}" if i.text or not i.sign else ""))
        return "\n".join(out)

    def html(self) -> str:
        parts: list[str] = []
        for title, items in _sections(self.sent):
            parts.append(f"<h4>{escape(title)}</h4>")
            for i in items:
                parts.append(_item_html(i))
        return f'<div class="{NO_TEX}">{"".join(parts)}</div>'  # "$5 … $10" in a prompt is no math

    def _repr_mimebundle_(self, include: object = None, exclude: object = None) -> dict[str, str]:
        # Marked: a terminal IPython prints it, and what the model read may hold escapes.
        return {"text/plain": terminal_text(self.plain()), "text/html": self.html()}


_SIGN_COLOUR = {"+": "var(--jp-success-color1, #2e7d32)", "-": "var(--jp-error-color1, #c62828)"}


def _item_html(i: Item) -> str:
    if i.sign == "=":
        return f'<div style="color:var(--jp-ui-font-color2, #666);margin:2px 0">= {escape(i.head)}</div>'
    if i.head == "system" and not i.sign:
        return (f"<details><summary>system prompt ({len(i.text):,} chars)</summary>"
                f"<pre>{escape(i.text)}</pre></details>")
    style = "background:var(--jp-warn-color3, #fff3cd);" if i.marked else ""
    border = _SIGN_COLOUR.get(i.sign, "var(--jp-border-color1, #888)")
    return (f'<div style="{style}border-left:3px solid {border};padding:2px 6px;margin:2px 0">'
            f'<b>{escape(i.sign)} {escape(i.head)}</b>'
            f'<pre style="white-space:pre-wrap;margin:0">{escape(i.text)}</pre></div>')


def render_sent(sent: Sequence[SentRequest]) -> SentView:
    """Wrap requests for display."""
    return SentView(list(sent))
