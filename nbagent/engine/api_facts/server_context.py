"""What the API's server-side context management does to one request, as a pure function:
:func:`apply` takes a Messages API body and returns the messages the model sees after the
``context_management`` edits (``clear_tool_uses_20250919``, ``compact_20260112``), with the
edits applied and the compaction made (its block, signed, and its summarising iteration).

One transformation for two users: the simulated Messages API serves it to the SDK
(:mod:`nbagent.providers.simulated.context_edits`) and the context-policy explorer replays it
(:mod:`nbagent.explorer.server_layers`), so a replayed ``edit`` or ``compact`` layer clears and
summarises exactly what the simulator would. The rules follow Anthropic's documentation
(context editing; compaction at a token threshold): the server's view of a conversation holding a
compaction block starts at that block (what came before it is replaced by its summary);
``clear_tool_uses`` acts once the input reaches ``trigger``, keeps the newest ``keep`` tool
results and tools in ``exclude_tools``, and applies only when it clears at least
``clear_at_least`` tokens, and with ``clear_tool_inputs`` empties the cleared calls' inputs too;
``clear_thinking_20251015`` is accepted and reports nothing cleared
(the simulator keeps no thinking between turns). Token counts come from the caller's ``count``.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from ..contracts.messages import CompactionBlockParam, block_type, is_compaction, message_text
from .context_edit_types import AppliedEdit
from .context_edits import (
    CLEAR_TOOL_USES,
    CLEARED_PLACEHOLDER,
    COMPACT,
    DEFAULT_CLEAR_KEEP,
    DEFAULT_CLEAR_TRIGGER,
    DEFAULT_COMPACT_TRIGGER,
    edit_type,
)

Count = Callable[[Sequence[Mapping[str, object]]], int]
"""Prompt tokens of a list of messages (with whatever the caller adds: system prompt, tools)."""
SUMMARY_HEAD = "Summary of the conversation so far (simulated):"
SUMMARY_LINES = 40
"""The simulated summary: this head, then the first line (≤ 200 characters) of each of the first
``SUMMARY_LINES`` user messages with text."""

Blocks = list[Mapping[str, object]]
"""A message's content blocks as received (the request body is JSON nbagent did not check)."""


def sign(content: str) -> str:
    """The signature of a compaction's summary (deterministic and opaque, like the thinking ones)."""
    return base64.b64encode(hashlib.blake2b(b"compaction:" + content.encode(), digest_size=32).digest()).decode()


@dataclass
class Managed:
    """What the server did to one request: the messages the model sees, the edits applied, and the
    compaction it made (with the tokens of its summarising iteration)."""

    messages: list[Mapping[str, object]]
    applied: list[AppliedEdit] = field(default_factory=list)
    compaction: CompactionBlockParam | None = None
    compaction_usage: dict[str, int] | None = None


def apply(body: Mapping[str, object], count: Count) -> Managed:
    """The messages the model sees after the server's edits, and what the edits did."""
    raw = body.get("messages")
    managed = Managed(from_latest_compaction([m for m in raw if isinstance(m, Mapping)] if isinstance(raw, list) else []))
    config = body.get("context_management")
    edits = config.get("edits") if isinstance(config, Mapping) else None
    for edit in edits if isinstance(edits, list) else ():
        kind = edit_type(edit)
        if not isinstance(edit, Mapping) or not kind:
            continue
        if kind == CLEAR_TOOL_USES:
            _clear_tool_uses(managed, edit, count)
        elif kind == COMPACT:
            _compact(managed, edit, count)
        else:  # clear_thinking: nothing kept to clear
            managed.applied.append({"type": kind, "cleared_input_tokens": 0, "cleared_thinking_turns": 0})
    return managed


def blocks_of(message: object) -> Blocks:
    """A message's content blocks (none for string content or a malformed message)."""
    content = message.get("content") if isinstance(message, Mapping) else None
    return [b for b in content if isinstance(b, Mapping)] if isinstance(content, list) else []


def from_latest_compaction(messages: list[Mapping[str, object]]) -> list[Mapping[str, object]]:
    """The conversation as the server reads it: from the latest compaction block on, its summary first."""
    for i in range(len(messages) - 1, -1, -1):
        blocks = blocks_of(messages[i])
        for j in range(len(blocks) - 1, -1, -1):
            block = blocks[j]
            if is_compaction(block) and block.get("content"):
                summary = {"role": "user", "content": [{"type": "text", "text": str(block["content"])}]}
                rest = [dict(b) for b in blocks[j + 1:]]
                head = [{"role": messages[i]["role"], "content": rest}] if rest else []
                return [summary, *head, *messages[i + 1:]]
    return messages


def _value(edit: Mapping[str, object], key: str, default: int) -> int:
    """The ``value`` of an edit's ``{"type": ..., "value": n}`` parameter (``default`` if absent)."""
    match edit.get(key):
        case {"value": int() | float() | str() as value}:
            return int(value)
        case {"value": value}:
            raise TypeError(f"{key}.value must be a number, got {value!r}")
    return default


def _clear_tool_uses(managed: Managed, edit: Mapping[str, object], count: Count) -> None:
    trigger = _value(edit, "trigger", DEFAULT_CLEAR_TRIGGER)
    keep = _value(edit, "keep", DEFAULT_CLEAR_KEEP)
    least = _value(edit, "clear_at_least", 0)
    excluded = edit.get("exclude_tools")
    exclude = set(excluded) if isinstance(excluded, list) else set()
    before = count(managed.messages)
    if before < trigger:
        return
    names = {str(b.get("id")): str(b.get("name")) for m in managed.messages for b in blocks_of(m)
             if block_type(b) == "tool_use"}
    spots = [(i, j) for i, m in enumerate(managed.messages) for j, b in enumerate(blocks_of(m))
             if block_type(b) == "tool_result" and names.get(str(b.get("tool_use_id"))) not in exclude
             and b.get("content") != CLEARED_PLACEHOLDER]
    clear = spots[:-keep] if keep else spots
    # Copies of each list content, edited in place below; the caller's messages stay as they were.
    contents = {i: blocks_of(m) for i, m in enumerate(managed.messages) if isinstance(m.get("content"), list)}
    for i, j in clear:
        contents[i][j] = {**contents[i][j], "content": CLEARED_PLACEHOLDER}
    _clear_inputs(managed.messages, contents, {str(contents[i][j].get("tool_use_id")) for i, j in clear},
                  edit.get("clear_tool_inputs"), names)
    edited = [{**m, "content": contents[i]} if i in contents else m for i, m in enumerate(managed.messages)]
    cleared = before - count(edited)
    if clear and cleared >= least:
        managed.messages = edited
        managed.applied.append({"type": CLEAR_TOOL_USES, "cleared_input_tokens": cleared,
                                "cleared_tool_uses": len(clear)})


def _clear_inputs(messages: Sequence[Mapping[str, object]], contents: dict[int, Blocks], cleared: set[str],
                  which: object, names: Mapping[str, str]) -> None:
    """``clear_tool_inputs``: the cleared tool uses' inputs go too (``True``), or only those of the
    listed tools. The documentation says the tool call parameters are cleared and the call stays
    visible; what it leaves in their place is not documented, so the simulator leaves an empty
    object (the one ``input`` the API accepts for any tool)."""
    if not which:
        return
    tools = None if which is True else set(which) if isinstance(which, list) else set()
    for i, content in contents.items():
        if messages[i].get("role") != "assistant":
            continue
        for j, block in enumerate(content):
            uid = str(block.get("id"))
            if block_type(block) == "tool_use" and uid in cleared and (tools is None or names.get(uid) in tools):
                content[j] = {**block, "input": {}}


def summary_of(messages: Sequence[Mapping[str, object]]) -> str:
    """The simulated server's summary of ``messages`` (see :data:`SUMMARY_LINES`)."""
    lines = [message_text(m).strip().splitlines()[0][:200] for m in messages
             if m.get("role") == "user" and message_text(m).strip()]
    return SUMMARY_HEAD + "\n" + "\n".join(f"- {line}" for line in lines[:SUMMARY_LINES])


def _compact(managed: Managed, edit: Mapping[str, object], count: Count) -> None:
    trigger = _value(edit, "trigger", DEFAULT_COMPACT_TRIGGER)
    before = count(managed.messages)
    if before < trigger or len(managed.messages) < 2:
        return
    summary = summary_of(managed.messages[:-1])
    managed.compaction = {"type": "compaction", "content": summary, "signature": sign(summary)}
    managed.compaction_usage = {"input_tokens": before, "output_tokens": max(1, len(summary) // 4),
                                "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0}
    managed.messages = [{"role": "user", "content": [{"type": "text", "text": summary}]}, managed.messages[-1]]


__all__ = ["Blocks", "Count", "Managed", "SUMMARY_HEAD", "SUMMARY_LINES", "apply", "blocks_of",
           "from_latest_compaction", "sign", "summary_of"]
