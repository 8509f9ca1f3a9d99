"""Typed views of history messages for the loop tests' assertions.

A history message's ``content`` is ``str | list[ContentBlock]`` and a block is a union of the
contract's TypedDicts; each helper here narrows one of them to what the test reads, asserting it
(so a wrong shape fails with the value shown rather than with a KeyError further on)."""

from __future__ import annotations

from nbagent.engine.contracts.messages import (
    ContentBlock,
    MessageParam,
    ServerToolUseBlockParam,
    TextBlockParam,
    ThinkingBlockParam,
    ToolResultBlockParam,
    ToolUseBlockParam,
)


def content_list(message: MessageParam) -> list[ContentBlock]:
    """The message's content, asserted to be a list of blocks (as every message the engine builds)."""
    content = message["content"]
    assert isinstance(content, list), content
    return content


def as_text(block: ContentBlock) -> TextBlockParam:
    assert block["type"] == "text", block
    return block


def as_thinking(block: ContentBlock) -> ThinkingBlockParam:
    assert block["type"] == "thinking", block
    return block


def as_tool_use(block: ContentBlock) -> ToolUseBlockParam:
    assert block["type"] == "tool_use", block
    return block


def as_server_tool_use(block: ContentBlock) -> ServerToolUseBlockParam:
    assert block["type"] == "server_tool_use", block
    return block


def as_tool_result(block: ContentBlock) -> ToolResultBlockParam:
    assert block["type"] == "tool_result", block
    return block


def tool_results(message: MessageParam) -> list[ToolResultBlockParam]:
    """Every block of the message, each asserted to be a ``tool_result`` (an answering message)."""
    return [as_tool_result(b) for b in content_list(message)]
