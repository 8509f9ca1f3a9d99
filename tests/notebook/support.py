"""Reading back what a notebook session sent or holds, narrowed for the type checker."""

from __future__ import annotations

from nbagent.engine.contracts.messages import ContentBlock, Message


def list_content(message: Message) -> list[ContentBlock]:
    """The message's content blocks; fails if the content is a plain string (the messages these
    tests read always carry blocks: a prompt with its kernel context, a tool result, a reply)."""
    content = message["content"]
    assert isinstance(content, list), content
    return content
