"""Keeping tool output within what the model should be sent: cut in the middle, keep the full text.

The head and the tail of an output are usually what matters (the command, the error at the end),
so a long output loses its middle and says how much. The full text goes to ``ToolOutput.display``
so the notebook can still show it.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from nbagent.engine.tool_api import ToolOutput, truncate_middle

from nbagent.engine.config import DEFAULT_TOOL_OUTPUT_LIMIT as DEFAULT_LIMIT


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
