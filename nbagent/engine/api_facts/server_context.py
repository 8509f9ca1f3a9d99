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
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from ..contracts.messages import message_text
from .context_edits import (
    CLEAR_TOOL_USES,
    CLEARED_PLACEHOLDER,
    COMPACT,
    DEFAULT_CLEAR_KEEP,
    DEFAULT_CLEAR_TRIGGER,
    DEFAULT_COMPACT_TRIGGER,
)

Count = Callable[[Sequence[Mapping[str, Any]]], int]
"""Prompt tokens of a list of messages (with whatever the caller adds: system prompt, tools)."""
SUMMARY_HEAD = "Summary of the conversation so far (simulated):"
SUMMARY_LINES = 40
"""The simulated summary: this head, then the first line (≤ 200 characters) of each of the first
``SUMMARY_LINES`` user messages with text."""


def sign(content: str) -> str:
    """The signature of a compaction's summary (deterministic and opaque, like the thinking ones)."""
    return base64.b64encode(hashlib.blake2b(b"compaction:" + content.encode(), digest_size=32).digest()).decode()


@dataclass
class Managed:
    """What the server did to one request: the messages the model sees, the edits applied, and the
    compaction it made (with the tokens of its summarising iteration)."""

    messages: list[dict[str, Any]]
    applied: list[dict[str, Any]] = field(default_factory=list)
    compaction: dict[str, Any] | None = None
    compaction_usage: dict[str, int] | None = None


def apply(body: Mapping[str, Any], count: Count) -> Managed:
    """The messages the model sees after the server's edits, and what the edits did."""
    managed = Managed(from_latest_compaction(list(body.get("messages") or [])))
    for edit in (body.get("context_management") or {}).get("edits") or ():
        if edit.get("type") == CLEAR_TOOL_USES:
            _clear_tool_uses(managed, edit, count)
        elif edit.get("type") == COMPACT:
            _compact(managed, edit, count)
        elif edit.get("type"):  # clear_thinking: nothing kept to clear
            managed.applied.append({"type": edit["type"], "cleared_input_tokens": 0, "cleared_thinking_turns": 0})
    return managed


def blocks_of(message: Any) -> list[Mapping[str, Any]]:
    """A message's content blocks (none for string content or a malformed message)."""
    content = message.get("content") if isinstance(message, Mapping) else None
    return [b for b in content if isinstance(b, Mapping)] if isinstance(content, list) else []


def from_latest_compaction(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The conversation as the server reads it: from the latest compaction block on, its summary first."""
    for i in range(len(messages) - 1, -1, -1):
        blocks = blocks_of(messages[i])
        for j in range(len(blocks) - 1, -1, -1):
            if blocks[j].get("type") == "compaction" and blocks[j].get("content"):
                summary = {"role": "user", "content": [{"type": "text", "text": str(blocks[j]["content"])}]}
                rest = [dict(b) for b in blocks[j + 1:]]
                head = [{"role": messages[i]["role"], "content": rest}] if rest else []
                return [summary, *head, *messages[i + 1:]]
    return messages


def _clear_tool_uses(managed: Managed, edit: Mapping[str, Any], count: Count) -> None:
    trigger = int((edit.get("trigger") or {}).get("value", DEFAULT_CLEAR_TRIGGER))
    keep = int((edit.get("keep") or {}).get("value", DEFAULT_CLEAR_KEEP))
    least = int((edit.get("clear_at_least") or {}).get("value", 0))
    exclude = set(edit.get("exclude_tools") or ())
    before = count(managed.messages)
    if before < trigger:
        return
    names = {str(b.get("id")): str(b.get("name")) for m in managed.messages for b in blocks_of(m)
             if b.get("type") == "tool_use"}
    spots = [(i, j) for i, m in enumerate(managed.messages) for j, b in enumerate(blocks_of(m))
             if b.get("type") == "tool_result" and names.get(str(b.get("tool_use_id"))) not in exclude
             and b.get("content") != CLEARED_PLACEHOLDER]
    clear = spots[:-keep] if keep else spots
    edited = [dict(m, content=list(blocks_of(m))) if isinstance(m.get("content"), list) else m
              for m in managed.messages]
    for i, j in clear:
        edited[i]["content"][j] = {**edited[i]["content"][j], "content": CLEARED_PLACEHOLDER}
    _clear_inputs(edited, {str(edited[i]["content"][j].get("tool_use_id")) for i, j in clear},
                  edit.get("clear_tool_inputs"), names)
    cleared = before - count(edited)
    if clear and cleared >= least:
        managed.messages = edited
        managed.applied.append({"type": CLEAR_TOOL_USES, "cleared_input_tokens": cleared,
                                "cleared_tool_uses": len(clear)})


def _clear_inputs(messages: list[dict[str, Any]], cleared: set[str], which: Any, names: Mapping[str, str]) -> None:
    """``clear_tool_inputs``: the cleared tool uses' inputs go too (``True``), or only those of the
    listed tools. The documentation says the tool call parameters are cleared and the call stays
    visible; what it leaves in their place is not documented, so the simulator leaves an empty
    object (the one ``input`` the API accepts for any tool)."""
    if not which:
        return
    tools = None if which is True else set(which)
    for message in messages:
        if message.get("role") != "assistant" or not isinstance(message.get("content"), list):
            continue
        for j, block in enumerate(message["content"]):
            uid = str(block.get("id"))
            if block.get("type") == "tool_use" and uid in cleared and (tools is None or names.get(uid) in tools):
                message["content"][j] = {**block, "input": {}}


def summary_of(messages: Sequence[Mapping[str, Any]]) -> str:
    """The simulated server's summary of ``messages`` (see :data:`SUMMARY_LINES`)."""
    lines = [message_text(m).strip().splitlines()[0][:200] for m in messages
             if m.get("role") == "user" and message_text(m).strip()]
    return SUMMARY_HEAD + "\n" + "\n".join(f"- {line}" for line in lines[:SUMMARY_LINES])


def _compact(managed: Managed, edit: Mapping[str, Any], count: Count) -> None:
    trigger = int((edit.get("trigger") or {}).get("value", DEFAULT_COMPACT_TRIGGER))
    before = count(managed.messages)
    if before < trigger or len(managed.messages) < 2:
        return
    summary = summary_of(managed.messages[:-1])
    managed.compaction = {"type": "compaction", "content": summary, "signature": sign(summary)}
    managed.compaction_usage = {"input_tokens": before, "output_tokens": max(1, len(summary) // 4),
                                "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0}
    managed.messages = [{"role": "user", "content": [{"type": "text", "text": summary}]}, managed.messages[-1]]


__all__ = ["Count", "Managed", "SUMMARY_HEAD", "SUMMARY_LINES", "apply", "blocks_of", "from_latest_compaction",
           "sign", "summary_of"]
