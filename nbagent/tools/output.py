"""Keeping tool output within what the model should be sent: cut in the middle, keep the full text.

The head and the tail of an output are usually what matters (the command, the error at the end),
so a long output loses its middle and says how much. The full text goes to ``ToolOutput.display``
so the notebook can still show it.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from nbagent.engine.tool_api import ToolOutput

DEFAULT_LIMIT = 30_000

# Snap cuts to a line break when one is this close (as a share of the kept part): whole lines
# read better, and the cost is a few characters.
_SNAP_SHARE = 0.1


def _marker(omitted: int) -> str:
    return f"\n... [{omitted:,} characters omitted] ...\n"


def truncate_middle(text: str, limit: int = DEFAULT_LIMIT) -> str:
    """``text`` unchanged if it has at most ``limit`` characters, else its head and tail joined by
    a marker ``\\n... [12,345 characters omitted] ...\\n``. The result never exceeds ``limit``
    characters unless ``limit`` is smaller than the marker itself (then it is the marker alone)."""
    if limit < 0:
        raise ValueError("limit must be >= 0")
    if len(text) <= limit:
        return text
    budget = limit - len(_marker(len(text)))  # the widest marker this text can need
    if budget <= 0:
        return _marker(len(text))
    head_len = (budget + 1) // 2
    tail_len = budget - head_len
    head = text[:head_len]
    tail = text[len(text) - tail_len:] if tail_len else ""
    nl = head.rfind("\n")
    if nl >= 0 and head_len - nl <= max(1, int(head_len * _SNAP_SHARE)):
        head = head[: nl]
    nl = tail.find("\n")
    if tail and nl >= 0 and nl < max(1, int(tail_len * _SNAP_SHARE)):
        tail = tail[nl + 1:]
    return head + _marker(len(text) - len(head) - len(tail)) + tail


def truncate_output(output: ToolOutput, limit: int = DEFAULT_LIMIT) -> ToolOutput:
    """``output`` with its text cut by :func:`truncate_middle`; the full text goes to ``display``
    (unless the tool already set one). Text blocks of list content are cut one by one."""
    content = output.content
    if isinstance(content, str):
        if len(content) <= limit:
            return output
        display = output.display if output.display is not None else content
        return dataclasses.replace(output, content=truncate_middle(content, limit), display=display)
    changed = False
    blocks: list[dict[str, Any]] = []
    for block in content:
        text = block.get("text") if block.get("type") == "text" else None
        if isinstance(text, str) and len(text) > limit:
            block = {**block, "text": truncate_middle(text, limit)}
            changed = True
        blocks.append(block)
    if not changed:
        return output
    full = "\n".join(b["text"] for b in content if b.get("type") == "text" and isinstance(b.get("text"), str))
    display = output.display if output.display is not None else full
    return dataclasses.replace(output, content=blocks, display=display)


__all__ = ["DEFAULT_LIMIT", "truncate_middle", "truncate_output"]
