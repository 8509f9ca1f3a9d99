"""Server-side context management in the simulated API, from Anthropic's documentation: the
``context_management`` edits ``clear_tool_uses_20250919`` (with ``clear_tool_inputs``) and
``compact_20260112`` applied to what the model sees, ``applied_edits`` reported in the final
``message_delta``, the ``compaction`` block (signed: it must come back verbatim), its iterations
in ``usage``, and the 400s for a missing beta header, a changed compaction block, a model that
does not take an edit and a ``clear_tool_inputs`` that is neither a bool nor a list of names.

The server's view of a conversation holding a compaction block starts at that block: what came
before it is replaced by its summary (the API drops it). ``clear_thinking_20251015`` is accepted
and reports nothing cleared (the simulator's thinking is not kept between turns).
"""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from nbagent.engine.api_facts.context_edits import (
    CLEAR_TOOL_USES,
    CLEARED_PLACEHOLDER,
    COMPACT,
    DEFAULT_CLEAR_KEEP,
    DEFAULT_CLEAR_TRIGGER,
    DEFAULT_COMPACT_TRIGGER,
    required_betas,
    unsupported_edits,
)
from nbagent.engine.contracts.messages import message_text

from .validation import ApiError

Count = Callable[[Sequence[Mapping[str, Any]]], int]


def _bad(message: str) -> ApiError:
    return ApiError(400, "invalid_request_error", message)


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


def check(body: Mapping[str, Any], headers: Mapping[str, str]) -> None:
    """The 400s: a beta header missing for an edit or a compaction block, an edit the model does
    not take, a compaction block whose summary differs from what its signature vouches for."""
    sent = {b.strip() for b in headers.get("anthropic-beta", "").split(",") if b.strip()}
    managed = body.get("context_management")
    for beta in required_betas(body.get("messages") or [], managed):
        if beta not in sent:
            what = "`compaction` blocks" if beta.startswith("compact") and not managed else "context_management"
            raise _bad(f"{what} requires the beta header `anthropic-beta: {beta}`")
    for kind in unsupported_edits(str(body.get("model", "")), managed):
        raise _bad(f"context_management: the edit `{kind}` is not supported for model {body.get('model')}")
    for k, edit in enumerate((managed or {}).get("edits") or ()):
        which = edit.get("clear_tool_inputs") if isinstance(edit, Mapping) else None
        if which is not None and not isinstance(which, bool) and not (
                isinstance(which, list) and all(isinstance(t, str) for t in which)):
            raise _bad(f"context_management.edits.{k}.clear_tool_inputs: Input should be a valid boolean "
                       "or a list of tool names")
    for i, message in enumerate(body.get("messages") or []):
        for j, block in enumerate(_blocks(message)):
            if block.get("type") == "compaction" and block.get("content") is not None:
                if block.get("signature") != sign(str(block["content"])):
                    raise _bad(f"messages.{i}.content.{j}: the `compaction` block's `content` differs from the "
                               "text its `signature` recorded (compaction_content_mismatch)")


def apply(body: Mapping[str, Any], count: Count) -> Managed:
    """The messages the model sees after the server's edits, and what the edits did."""
    managed = Managed(_from_latest_compaction(list(body.get("messages") or [])))
    for edit in (body.get("context_management") or {}).get("edits") or ():
        if edit.get("type") == CLEAR_TOOL_USES:
            _clear_tool_uses(managed, edit, count)
        elif edit.get("type") == COMPACT:
            _compact(managed, edit, count)
        elif edit.get("type"):  # clear_thinking: nothing kept to clear
            managed.applied.append({"type": edit["type"], "cleared_input_tokens": 0, "cleared_thinking_turns": 0})
    return managed


def _blocks(message: Any) -> list[Mapping[str, Any]]:
    content = message.get("content") if isinstance(message, Mapping) else None
    return [b for b in content if isinstance(b, Mapping)] if isinstance(content, list) else []


def _from_latest_compaction(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The conversation as the server reads it: from the latest compaction block on, its summary first."""
    for i in range(len(messages) - 1, -1, -1):
        blocks = _blocks(messages[i])
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
    names = {str(b.get("id")): str(b.get("name")) for m in managed.messages for b in _blocks(m)
             if b.get("type") == "tool_use"}
    spots = [(i, j) for i, m in enumerate(managed.messages) for j, b in enumerate(_blocks(m))
             if b.get("type") == "tool_result" and names.get(str(b.get("tool_use_id"))) not in exclude
             and b.get("content") != CLEARED_PLACEHOLDER]
    clear = spots[:-keep] if keep else spots
    edited = [dict(m, content=list(_blocks(m))) if isinstance(m.get("content"), list) else m for m in managed.messages]
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


def _compact(managed: Managed, edit: Mapping[str, Any], count: Count) -> None:
    trigger = int((edit.get("trigger") or {}).get("value", DEFAULT_COMPACT_TRIGGER))
    before = count(managed.messages)
    if before < trigger or len(managed.messages) < 2:
        return
    lines = [message_text(m).strip().splitlines()[0][:200] for m in managed.messages[:-1]
             if m.get("role") == "user" and message_text(m).strip()]
    summary = "Summary of the conversation so far (simulated):\n" + "\n".join(f"- {line}" for line in lines[:40])
    managed.compaction = {"type": "compaction", "content": summary, "signature": sign(summary)}
    managed.compaction_usage = {"input_tokens": before, "output_tokens": max(1, len(summary) // 4),
                                "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0}
    managed.messages = [{"role": "user", "content": [{"type": "text", "text": summary}]}, managed.messages[-1]]


def add_to_message(message: dict[str, Any], managed: Managed) -> None:
    """The compaction block first in the reply, its iteration in ``usage``, the applied edits."""
    if managed.compaction is not None:
        message["content"] = [dict(managed.compaction), *message["content"]]
        last = {k: message["usage"][k] for k in ("input_tokens", "output_tokens", "cache_read_input_tokens",
                                                 "cache_creation_input_tokens")}
        message["usage"]["iterations"] = [{"type": "compaction", **(managed.compaction_usage or {})},
                                          {"type": "message", **last}]
    if managed.applied:
        message["context_management"] = {"applied_edits": list(managed.applied)}


__all__ = ["Managed", "add_to_message", "apply", "check", "sign"]
