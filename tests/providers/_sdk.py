"""Narrowing helpers for the tests that drive the real ``anthropic`` SDK.

The SDK's methods take its own TypedDicts (``anthropic.types.MessageParam``, ``ToolParam``): each
module types the data it hands them as those. The content of a reply is a union of block classes:
these helpers assert the block is the kind the test expects (a clearer failure than an AttributeError).
"""

from __future__ import annotations

import anthropic
import httpx2
from anthropic.types import ContentBlock, TextBlock, ToolUseBlock


def transport_error(raised: BaseException | None) -> BaseException | None:
    """The ``httpx2`` error behind what the SDK raised when a stream's body failed to read.

    Until anthropic 2.16 the SDK let it through bare; since 2.17 it raises an ``APIConnectionError``
    (or ``APITimeoutError``) caused by it. Either way the failure is the transport's."""
    if isinstance(raised, anthropic.APIConnectionError) and isinstance(raised.__cause__, httpx2.TransportError):
        return raised.__cause__
    return raised


def text_of(block: ContentBlock) -> str:
    """The text of a block the test expects to be a ``text`` block."""
    assert isinstance(block, TextBlock), block
    return block.text


def tool_use(block: ContentBlock) -> ToolUseBlock:
    """A block the test expects to be a ``tool_use`` block."""
    assert isinstance(block, ToolUseBlock), block
    return block
