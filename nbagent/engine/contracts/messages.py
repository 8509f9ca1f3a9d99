"""Helpers over the Messages API's messages and blocks, and the validity check every test leans on.

A message is ``{"role": "user" | "assistant", "content": str | list[block]}``; its shapes are the
TypedDicts of :mod:`~nbagent.engine.contracts.message_types` (mirroring the SDK's param types, since
the engine does not import the SDK), re-exported here so that the engine imports messages and their
helpers from one place. Nothing here mutates its input.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Mapping, Sequence, Union

from .message_types import (
    CacheControlEphemeralParam,
    CompactionBlockParam,
    ContentBlock,
    DocumentBlockParam,
    ImageBlockParam,
    Message,
    MessageParam,
    RedactedThinkingBlockParam,
    ServerToolUseBlockParam,
    TextBlockParam,
    ThinkingBlockParam,
    ToolResultBlockParam,
    ToolResultContent,
    ToolUseBlockParam,
    WebFetchToolResultBlockParam,
    WebSearchToolResultBlockParam,
)

if TYPE_CHECKING:
    from typing_extensions import TypeGuard

ServerToolResult = Union[WebSearchToolResultBlockParam, WebFetchToolResultBlockParam]
"""The result block of a server tool."""

def block_type(block: object) -> str | None:
    """The ``type`` of a content block: None for a non-mapping or a block without a string type.
    The one place a block's kind is read; the TypeGuards below are built on it."""
    # Not a mapping pattern (``case {"type": str()}``): that costs three times as much, and this
    # runs ~40 times a request.
    if isinstance(block, dict):
        kind = block.get("type")
    elif isinstance(block, Mapping):
        kind = block.get("type")
    else:
        return None
    return kind if isinstance(kind, str) else None


def is_text(block: object) -> TypeGuard[TextBlockParam]:
    """A ``text`` block (anything else, a non-dict included, is not)."""
    return block_type(block) == "text"


def is_tool_use(block: object) -> TypeGuard[ToolUseBlockParam]:
    """A ``tool_use`` block (anything else, a non-dict included, is not)."""
    return block_type(block) == "tool_use"


def is_tool_result(block: object) -> TypeGuard[ToolResultBlockParam]:
    """A ``tool_result`` block (anything else, a non-dict included, is not)."""
    return block_type(block) == "tool_result"


def is_compaction(block: object) -> TypeGuard[CompactionBlockParam]:
    """A server ``compaction`` block (anything else, a non-dict included, is not)."""
    return block_type(block) == "compaction"


def is_server_tool_result(block: object) -> TypeGuard[ServerToolResult]:
    """The result block of a server tool (``web_search_tool_result``, ``web_fetch_tool_result``, and
    any later ``*_tool_result`` the API adds; a client ``tool_result`` is not one)."""
    kind = block_type(block)
    return kind is not None and kind.endswith("_tool_result") and kind != "tool_result"


def has_compaction(messages: Sequence[Mapping[str, object]]) -> bool:
    """Whether any message holds a server ``compaction`` block (requests then need its beta header)."""
    for m in messages:
        content = m.get("content")
        if isinstance(content, list):
            for b in content:
                if is_compaction(b):
                    return True
    return False


def first_replaced(current: Sequence[object], indexed: Sequence[object]) -> int | None:
    """Where ``current`` stops being ``indexed`` followed by new items: the first index whose item
    is another object (or the end of the shorter list); None when ``indexed`` is a prefix of
    ``current``. Messages are replaced, never changed in place, so an index kept up with a growing
    history redoes only from there (after a rollback, a merged prompt, a compaction)."""
    n = len(indexed)
    if len(current) >= n and current[:n] == indexed:  # list == compares identity first, in C
        return None
    return next((i for i, (a, b) in enumerate(zip(current, indexed, strict=False)) if a is not b),
                min(n, len(current)))


class CompactionScan:
    """:func:`has_compaction` for a conversation that grows between calls: only the messages
    after the part it shares with the previous call's are looked at (the shared part is found
    by one list compare: identity first, at C speed)."""

    def __init__(self) -> None:
        # One tuple, read and replaced whole: a provider used from several threads stays right.
        self._state: tuple[list[Mapping[str, object]], bool] = ([], False)

    def __call__(self, messages: Sequence[Mapping[str, object]]) -> bool:
        current = list(messages)
        seen, found = self._state
        n = len(seen)
        if len(current) < n or current[:n] != seen:
            found, n = False, 0
        found = found or has_compaction(current[n:])
        self._state = (current, found)
        return found


def blocks(message: MessageParam) -> list[ContentBlock]:
    """The message's content as a list of blocks (a string becomes one text block)."""
    content = message.get("content", "")
    if isinstance(content, str):
        return [TextBlockParam(type="text", text=content)] if content else []
    return [b for b in content if isinstance(b, (dict, Mapping))]


def tool_uses(message: MessageParam) -> list[ToolUseBlockParam]:
    """The ``tool_use`` blocks of a message, in order."""
    return [b for b in blocks(message) if is_tool_use(b)]


def server_tool_calls(message: MessageParam) -> list[tuple[ServerToolUseBlockParam, ServerToolResult | None]]:
    """Each ``server_tool_use`` block of an assistant message with its result block (or None)."""
    results: dict[object, ServerToolResult] = {}
    calls: list[ServerToolUseBlockParam] = []
    for b in blocks(message):
        if is_server_tool_result(b):
            results[b.get("tool_use_id")] = b
        elif b["type"] == "server_tool_use":
            calls.append(b)
    return [(b, results.get(b.get("id"))) for b in calls]


def result_sources(result: Mapping[str, object] | None) -> tuple[tuple[str, ...], str | None]:
    """The "title — url" lines of a server tool's result block, and its error code if it failed."""
    if result is None:
        return (), "no result"
    content = result.get("content")
    items: list[object] = content if isinstance(content, list) else []
    if isinstance(content, (dict, Mapping)):  # an error object, or a single fetched document
        code = content.get("error_code")
        if code:
            return (), str(code)
        items = [content]
    sources = []
    for item in items:
        if isinstance(item, (dict, Mapping)) and item.get("url"):
            title = str(item.get("title") or "").strip()
            sources.append(f"{title} — {item['url']}" if title else str(item["url"]))
    return tuple(sources), None


def tool_result_ids(message: MessageParam) -> list[str]:
    """The ``tool_use_id`` of each ``tool_result`` block, in order."""
    return [b.get("tool_use_id", "") for b in blocks(message) if is_tool_result(b)]


def text_of(message: MessageParam) -> str:
    """Concatenated text blocks of a message."""
    return "".join(b.get("text", "") for b in blocks(message) if is_text(b))


def content_blocks(message: Mapping[str, object]) -> list[object]:
    """The content exactly as sent: a string is one text block (even an empty one), a list is
    copied as is (unlike :func:`blocks`, nothing is dropped; any message-shaped mapping)."""
    content = message.get("content", "")
    if isinstance(content, str):
        return [TextBlockParam(type="text", text=content)]
    return list(content) if isinstance(content, (list, tuple)) else []


def block_text(block: Mapping[str, object]) -> str:
    """The text that a content block contributes to the prompt, for counting and searching
    (images contribute nothing). Takes any block-shaped mapping: the simulator and the explorer
    count blocks of requests and files that were never typed."""
    kind = block_type(block)  # one read of the type, not a mapping pattern per kind
    if kind == "text":
        return str(block.get("text", ""))
    if kind == "thinking":
        return str(block.get("thinking", ""))
    if kind == "redacted_thinking":
        return str(block.get("data", ""))
    if kind == "compaction":
        return str(block.get("content") or "")
    if kind == "tool_use":
        return str(block.get("name", "")) + json.dumps(block.get("input", {}), sort_keys=True, default=str)
    if kind == "tool_result":
        content = block.get("content", "")
        if isinstance(content, str):
            return content
        return "".join(block_text(b) for b in content if isinstance(b, (dict, Mapping))
                       and block_type(b) != "image") if isinstance(content, list) else ""
    return ""


def message_text(message: Mapping[str, object]) -> str:
    """All countable text of a message (any message-shaped mapping, as :func:`block_text`)."""
    content = message.get("content", "")
    if isinstance(content, str):
        return content
    if not isinstance(content, (list, tuple)):
        return ""
    return "\n".join(block_text(b) for b in content if isinstance(b, (dict, Mapping)))


def tool_result_text(block: Mapping[str, object], sep: str = "") -> str:
    """The text of a ``tool_result`` block: its string content, or its text blocks joined by ``sep``."""
    content = block.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return sep.join(b.get("text", "") for b in content if is_text(b))
    return ""


def merge_consecutive(messages: Sequence[MessageParam]) -> list[MessageParam]:
    """Merge runs of same-role messages, as the Messages API does on receipt."""
    out: list[MessageParam] = []
    for m in messages:
        if out and out[-1]["role"] == m["role"]:
            out[-1] = {"role": m["role"], "content": blocks(out[-1]) + blocks(m)}
        else:
            out.append({"role": m["role"], "content": m.get("content", "")})
    return out


def history_problems(messages: Sequence[MessageParam], *, allow_trailing_tool_use: bool = False) -> list[str]:
    """Everything that would make the Messages API reject ``messages`` (empty list = valid).

    Checks: first message is user; roles alternate once same-role runs are merged; every
    ``tool_use`` is answered by a ``tool_result`` in the next message; no ``tool_result`` without a
    ``tool_use`` in the message before it; tool_use ids unique.
    """
    if not messages:
        return ["history is empty"]
    problems: list[str] = []
    if messages[0].get("role") != "user":
        problems.append("first message is not from the user")
    merged = merge_consecutive(messages)
    seen_ids: set[str] = set()
    for i, m in enumerate(merged):
        if m["role"] not in ("user", "assistant"):
            problems.append(f"message {i} has role {m['role']!r}")
        uses = _use_ids(m)
        problems += _id_problems(i, uses, seen_ids)
        problems += _result_problems(i, m, _use_ids(merged[i - 1]) if i > 0 else [])
        if uses:
            problems += _answer_problems(i, uses, merged[i + 1] if i + 1 < len(merged) else None,
                                         allow_trailing_tool_use)
    return problems


def _use_ids(message: MessageParam) -> list[object]:
    """The ids of an assistant message's tool calls (a user message has none)."""
    return [b.get("id") for b in tool_uses(message)] if message["role"] == "assistant" else []


def _result_problems(i: int, message: MessageParam, prev_uses: list[object]) -> list[str]:
    """Tool results belong in a user message, each answering a tool call of the message before."""
    results = tool_result_ids(message)
    if not results:
        return []
    if message["role"] == "assistant":
        return [f"message {i}: tool_result in an assistant message"]
    return [f"message {i}: tool_result {rid} has no tool_use in the message before it"
            for rid in results if rid not in prev_uses]


def _answer_problems(i: int, uses: list[object], following: MessageParam | None, allow_trailing: bool) -> list[str]:
    """Every tool call of message ``i`` is answered by the next message (or is the last one)."""
    if following is None:
        return [] if allow_trailing else [f"message {i}: tool_use {uses} never answered"]
    answered = set(tool_result_ids(following))
    missing = [u for u in uses if u not in answered]
    return [f"message {i}: tool_use {missing} not answered in the next message"] if missing else []


def _id_problems(i: int, uses: list[object], seen_ids: set[str]) -> list[str]:
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


def is_blank_text(block: object) -> bool:
    """An empty or whitespace-only text block (the API rejects both)."""
    return is_text(block) and not str(block.get("text", "")).strip()


def is_content_block(block: object) -> TypeGuard[ContentBlock]:
    """A mapping with a string ``type``: shaped like a content block (its fields are the sender's to get right)."""
    return block_type(block) is not None


def prompt_blocks(prompt: str | Sequence[Mapping[str, object]]) -> list[ContentBlock]:
    """The user's prompt as it enters the history: content blocks, blank text left out;
    ``ValueError`` if nothing is left (an empty text block would be rejected on this and every
    later request) or if an item is not a block (a mapping with a ``type``)."""
    if isinstance(prompt, str):
        return prompt_blocks([TextBlockParam(type="text", text=prompt)])
    kept: list[ContentBlock] = []
    for b in prompt:
        if not is_content_block(b):
            raise ValueError(f"a prompt block must be a dict with a 'type' (such as 'text'), got {b!r:.80}")
        if not is_blank_text(b):
            kept.append(b)
    if not kept:
        raise ValueError("the prompt is empty: write something for the agent to do")
    return kept


def clean_assistant(message: MessageParam) -> MessageParam:
    """The provider's reply as it enters the history. The API rejects empty and whitespace-only
    text blocks in later requests (and Claude does send ``"\n\n"`` before a tool call): drop
    them, keeping one block if nothing else is left."""
    content = [b for b in blocks(message) if not is_blank_text(b)]
    if not content:
        content = [TextBlockParam(type="text", text="(no reply)")]
    return {"role": "assistant", "content": content}


def error_result(tool_use_id: str, message: str) -> ToolResultBlockParam:
    """A ``tool_result`` block with ``is_error`` set."""
    return {"type": "tool_result", "tool_use_id": tool_use_id, "content": message, "is_error": True}


__all__ = [  # the shapes from message_types.py included: importable from here as before
    "CacheControlEphemeralParam", "CompactionBlockParam", "ContentBlock", "DocumentBlockParam", "ImageBlockParam",
    "Message", "MessageParam", "RedactedThinkingBlockParam", "ServerToolResult", "ServerToolUseBlockParam",
    "TextBlockParam", "ThinkingBlockParam", "ToolResultBlockParam", "ToolResultContent", "ToolUseBlockParam",
    "WebFetchToolResultBlockParam", "WebSearchToolResultBlockParam", "block_text", "block_type", "blocks",
    "clean_assistant", "content_blocks", "error_result", "has_compaction", "history_problems", "is_blank_text",
    "is_compaction", "is_content_block", "is_server_tool_result", "is_text", "is_tool_result", "is_tool_use",
    "merge_consecutive", "message_text", "prompt_blocks", "result_sources", "server_tool_calls", "text_of",
    "tool_result_ids", "tool_result_text", "tool_uses",
]
