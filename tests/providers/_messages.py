"""Narrowing helpers for reading the engine's messages (the contract TypedDicts) in tests."""

from __future__ import annotations

from nbagent.engine.contracts.messages import ContentBlock, Message


def list_content(message: Message) -> list[ContentBlock]:
    """The message's list content (the test expects blocks, not a plain string)."""
    content = message["content"]
    assert isinstance(content, list), content
    return content
