"""Helpers over Anthropic-format messages, and the validity check every test leans on.

A message is ``{"role": "user" | "assistant", "content": str | list[block]}``. Nothing here
mutates its input.
"""

from __future__ import annotations

import json
from typing import Any, Mapping, Sequence

Message = dict[str, Any]
# ``isinstance(x, (dict, Mapping))`` across the engine: history's blocks are dicts, and the exact
# type check answers them before the ABC machinery (a measurable share of a request otherwise).


def blocks(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The message's content as a list of blocks (a string becomes one text block)."""
    content = message.get("content", "")
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    return [b for b in content if isinstance(b, (dict, Mapping))]  # type: ignore[misc]


def tool_uses(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The ``tool_use`` blocks of a message, in order."""
    return [b for b in blocks(message) if b.get("type") == "tool_use"]


def server_tool_calls(message: Mapping[str, Any]) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
    """Each ``server_tool_use`` block of an assistant message with its result block (or None)."""
    results = {b.get("tool_use_id"): b for b in blocks(message)
               if str(b.get("type", "")).endswith("_tool_result") and b.get("type") != "tool_result"}
    return [(b, results.get(b.get("id"))) for b in blocks(message) if b.get("type") == "server_tool_use"]


def result_sources(result: Mapping[str, Any] | None) -> tuple[tuple[str, ...], str | None]:
    """The "title — url" lines of a server tool's result block, and its error code if it failed."""
    if result is None:
        return (), "no result"
    content = result.get("content")
    if isinstance(content, (dict, Mapping)):  # an error object, or a single fetched document
        code = content.get("error_code")
        if code:
            return (), str(code)
        content = [content]
    sources = []
    for item in content if isinstance(content, list) else []:
        if isinstance(item, (dict, Mapping)) and item.get("url"):
            title = str(item.get("title") or "").strip()
            sources.append(f"{title} — {item['url']}" if title else str(item["url"]))
    return tuple(sources), None


def tool_result_ids(message: Mapping[str, Any]) -> list[str]:
    """The ``tool_use_id`` of each ``tool_result`` block, in order."""
    return [b.get("tool_use_id", "") for b in blocks(message) if b.get("type") == "tool_result"]


def text_of(message: Mapping[str, Any]) -> str:
    """Concatenated text blocks of a message."""
    return "".join(b.get("text", "") for b in blocks(message) if b.get("type") == "text")


def content_blocks(message: Mapping[str, Any]) -> list[Any]:
    """The content exactly as sent: a string is one text block (even an empty one), a list is
    copied as is (unlike :func:`blocks`, nothing is dropped)."""
    content = message.get("content", "")
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content or ())


def block_text(block: Mapping[str, Any]) -> str:
    """The text that a content block contributes to the prompt, for counting and searching
    (images contribute nothing)."""
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text", ""))
    if kind == "thinking":
        return str(block.get("thinking", ""))
    if kind == "redacted_thinking":
        return str(block.get("data", ""))
    if kind == "tool_use":
        return str(block.get("name", "")) + json.dumps(block.get("input", {}), sort_keys=True, default=str)
    if kind == "tool_result":
        content = block.get("content", "")
        if isinstance(content, str):
            return content
        return "".join(block_text(b) for b in content if isinstance(b, (dict, Mapping)) and b.get("type") != "image")
    return ""


def message_text(message: Mapping[str, Any]) -> str:
    """All countable text of a message."""
    content = message.get("content", "")
    if isinstance(content, str):
        return content
    return "\n".join(block_text(b) for b in content if isinstance(b, (dict, Mapping)))


def tool_result_text(block: Mapping[str, Any], sep: str = "") -> str:
    """The text of a ``tool_result`` block: its string content, or its text blocks joined by ``sep``."""
    content = block.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return sep.join(b.get("text", "") for b in content if isinstance(b, (dict, Mapping)) and b.get("type") == "text")
    return ""


def merge_consecutive(messages: Sequence[Mapping[str, Any]]) -> list[Message]:
    """Merge runs of same-role messages, as the Messages API does on receipt."""
    out: list[Message] = []
    for m in messages:
        if out and out[-1]["role"] == m["role"]:
            out[-1] = {"role": m["role"], "content": blocks(out[-1]) + blocks(m)}
        else:
            out.append({"role": m["role"], "content": m.get("content", "")})
    return out


def history_problems(messages: Sequence[Mapping[str, Any]], *, allow_trailing_tool_use: bool = False) -> list[str]:
    """Everything that would make the Messages API reject ``messages`` (empty list = valid).

    Checks: first message is user; roles alternate once same-role runs are merged; every
    ``tool_use`` is answered by a ``tool_result`` in the next message; no ``tool_result`` without a
    ``tool_use`` in the message before it; tool_use ids unique.
    """
    problems: list[str] = []
    if not messages:
        return ["history is empty"]
    if messages[0].get("role") != "user":
        problems.append("first message is not from the user")
    merged = merge_consecutive(messages)
    seen_ids: set[str] = set()
    for i, m in enumerate(merged):
        if m["role"] not in ("user", "assistant"):
            problems.append(f"message {i} has role {m['role']!r}")
        uses = [b.get("id") for b in tool_uses(m)] if m["role"] == "assistant" else []
        problems += _id_problems(i, uses, seen_ids)
        results = tool_result_ids(m)
        if m["role"] == "assistant" and results:
            problems.append(f"message {i}: tool_result in an assistant message")
        if m["role"] == "user" and results:
            prev_uses = [b.get("id") for b in tool_uses(merged[i - 1])] if i > 0 and merged[i - 1]["role"] == "assistant" else []
            for rid in results:
                if rid not in prev_uses:
                    problems.append(f"message {i}: tool_result {rid} has no tool_use in the message before it")
        if uses:
            if i + 1 >= len(merged):
                if not allow_trailing_tool_use:
                    problems.append(f"message {i}: tool_use {uses} never answered")
            else:
                answered = set(tool_result_ids(merged[i + 1]))
                missing = [u for u in uses if u not in answered]
                if missing:
                    problems.append(f"message {i}: tool_use {missing} not answered in the next message")
    return problems


def _id_problems(i: int, uses: list[Any], seen_ids: set[str]) -> list[str]:
    """Tool-use ids must be strings, unique in the conversation."""
    problems = []
    for uid in uses:
        if not isinstance(uid, str):
            problems.append(f"message {i}: tool_use id {uid!r} is not a string")
        elif uid in seen_ids:
            problems.append(f"tool_use id {uid} repeated")
        else:
            seen_ids.add(uid)
    return problems


def is_blank_text(block: Mapping[str, Any]) -> bool:
    """An empty or whitespace-only text block (the API rejects both)."""
    return block.get("type") == "text" and not str(block.get("text", "")).strip()


def prompt_blocks(prompt: str | list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The prompt as content blocks, blank text left out; ``ValueError`` if nothing is left
    (an empty text block would be rejected on this and every later request)."""
    raw = [{"type": "text", "text": prompt}] if isinstance(prompt, str) else list(prompt)
    kept = [b for b in raw if not is_blank_text(b)]
    if not kept:
        raise ValueError("the prompt is empty: write something for the agent to do")
    return kept


def clean_assistant(message: dict[str, Any]) -> dict[str, Any]:
    """The API rejects empty and whitespace-only text blocks in later requests (and Claude does
    send ``"\n\n"`` before a tool call): drop them, keeping one block if nothing else is left."""
    content = [b for b in message.get("content", []) if not is_blank_text(b)]
    if not content:
        content = [{"type": "text", "text": "(no reply)"}]
    return {"role": "assistant", "content": content}


def error_result(tool_use_id: str, message: str) -> dict[str, Any]:
    """A ``tool_result`` block with ``is_error`` set."""
    return {"type": "tool_result", "tool_use_id": tool_use_id, "content": message, "is_error": True}
