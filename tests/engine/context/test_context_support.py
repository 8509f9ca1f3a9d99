"""Message builders shared by the context tests (this module holds no tests itself)."""

from __future__ import annotations

from nbagent.engine.contracts.json_types import JSONValue
from nbagent.engine.contracts.messages import (
    ContentBlock,
    MessageParam,
    TextBlockParam,
    ToolResultBlockParam,
    ToolResultContent,
    ToolUseBlockParam,
)


def text(t: str) -> TextBlockParam:
    return {"type": "text", "text": t}


def use(tool_id: str, name: str = "python", **tool_input: JSONValue) -> ToolUseBlockParam:
    return {"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}


def result(tool_id: str, content: str | list[ToolResultContent] = "ok", is_error: bool = False) -> ToolResultBlockParam:
    block: ToolResultBlockParam = {"type": "tool_result", "tool_use_id": tool_id, "content": content}
    if is_error:
        block["is_error"] = True
    return block


def user(*blocks: str | ContentBlock) -> MessageParam:
    """A user message: one string is string content, blocks are list content."""
    return {"role": "user", "content": _content(blocks)}


def assistant(*blocks: str | ContentBlock) -> MessageParam:
    """An assistant message: one string is string content, blocks are list content."""
    return {"role": "assistant", "content": _content(blocks)}


def _content(blocks: tuple[str | ContentBlock, ...]) -> str | list[ContentBlock]:
    if len(blocks) == 1 and isinstance(blocks[0], str):
        return blocks[0]
    out: list[ContentBlock] = []
    for block in blocks:
        assert not isinstance(block, str), "a string is content on its own, not a block"
        out.append(block)
    return out


def mention(path: str, body: str) -> str:
    return f'<file_content path="{path}">{body}</file_content>'


def chat(n_pairs: int, *, task: str = "the task") -> list[MessageParam]:
    """``n_pairs`` user/assistant pairs with list content."""
    out = [user(text(task)), assistant(text("first answer"))]
    for i in range(1, n_pairs):
        out += [user(text(f"question {i}")), assistant(text(f"answer {i}"))]
    return out


def read_turn(tool_id: str, path: str, content: str, *, name: str = "read_file",
              **extra: JSONValue) -> list[MessageParam]:
    """An assistant tool call and the user message with its result."""
    return [assistant(text("reading"), use(tool_id, name, path=path, **extra)), user(result(tool_id, content))]
