"""Message builders shared by the context tests (this module holds no tests itself)."""

from __future__ import annotations

from typing import Any


def text(t: str) -> dict[str, Any]:
    return {"type": "text", "text": t}


def use(tool_id: str, name: str = "python", **tool_input: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}


def result(tool_id: str, content: Any = "ok", is_error: bool = False) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": tool_id, "content": content}
    if is_error:
        block["is_error"] = True
    return block


def user(*blocks: Any) -> dict[str, Any]:
    if len(blocks) == 1 and isinstance(blocks[0], str):
        return {"role": "user", "content": blocks[0]}
    return {"role": "user", "content": list(blocks)}


def assistant(*blocks: Any) -> dict[str, Any]:
    if len(blocks) == 1 and isinstance(blocks[0], str):
        return {"role": "assistant", "content": blocks[0]}
    return {"role": "assistant", "content": list(blocks)}


def mention(path: str, body: str) -> str:
    return f'<file_content path="{path}">{body}</file_content>'


def chat(n_pairs: int, *, task: str = "the task") -> list[dict[str, Any]]:
    """``n_pairs`` user/assistant pairs with list content."""
    out = [user(text(task)), assistant(text("first answer"))]
    for i in range(1, n_pairs):
        out += [user(text(f"question {i}")), assistant(text(f"answer {i}"))]
    return out


def read_turn(tool_id: str, path: str, content: str, *, name: str = "read_file", **extra: Any) -> list[dict[str, Any]]:
    """An assistant tool call and the user message with its result."""
    return [assistant(text("reading"), use(tool_id, name, path=path, **extra)), user(result(tool_id, content))]
