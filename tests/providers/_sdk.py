"""Narrowing helpers for the tests that drive the real ``anthropic`` SDK.

The SDK's methods take its own TypedDicts (``anthropic.types.MessageParam``, ``ToolParam``): each
module types the data it hands them as those. The content of a reply is a union of block classes:
these helpers assert the block is the kind the test expects (a clearer failure than an AttributeError).
"""

from __future__ import annotations

from anthropic.types import ContentBlock, TextBlock, ToolUseBlock


def text_of(block: ContentBlock) -> str:
    """The text of a block the test expects to be a ``text`` block."""
    assert isinstance(block, TextBlock), block
    return block.text


def tool_use(block: ContentBlock) -> ToolUseBlock:
    """A block the test expects to be a ``tool_use`` block."""
    assert isinstance(block, ToolUseBlock), block
    return block
