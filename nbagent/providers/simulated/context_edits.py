"""Server-side context management in the simulated API, from Anthropic's documentation: the
400s for a missing beta header, a changed compaction block, a model that does not take an edit
and a ``clear_tool_inputs`` that is neither a bool nor a list of names (:func:`check`), and what
the server did written into the reply (:func:`add_to_message`: ``applied_edits`` in the final
``message_delta``, the signed ``compaction`` block first, its iteration in ``usage``).

What the edits do to the messages the model sees is :func:`~nbagent.engine.api_facts.server_context.apply`,
shared with the context-policy explorer's replay (re-exported here with :class:`Managed` and
:func:`sign`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Mapping

from nbagent.engine.api_facts.context_edits import required_betas, unsupported_edits
from nbagent.engine.api_facts.server_context import Managed, apply, blocks_of, sign

from .validation import ApiError, RequestBody

if TYPE_CHECKING:
    from .framing import SimMessage


def _bad(message: str) -> ApiError:
    return ApiError(400, "invalid_request_error", message)


def check(body: RequestBody, headers: Mapping[str, str]) -> None:
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
    edits = (managed or {}).get("edits")
    for k, edit in enumerate(edits if isinstance(edits, list) else ()):
        which = edit.get("clear_tool_inputs") if isinstance(edit, Mapping) else None
        if which is not None and not isinstance(which, bool) and not (
                isinstance(which, list) and all(isinstance(t, str) for t in which)):
            raise _bad(f"context_management.edits.{k}.clear_tool_inputs: Input should be a valid boolean "
                       "or a list of tool names")
    for i, message in enumerate(body["messages"]):
        for j, block in enumerate(blocks_of(message)):
            match block:
                case {"type": "compaction", "content": content} if content is not None:
                    if block.get("signature") != sign(str(content)):
                            raise _bad(f"messages.{i}.content.{j}: the `compaction` block's `content` differs from "
                                   "the text its `signature` recorded (compaction_content_mismatch)")


def add_to_message(message: SimMessage, managed: Managed) -> None:
    """The compaction block first in the reply, its iteration in ``usage``, the applied edits."""
    if managed.compaction is not None:
        message["content"] = [dict(managed.compaction), *message["content"]]
        usage = message["usage"]
        message["usage"]["iterations"] = [
            {"type": "compaction", **(managed.compaction_usage or {})},
            {"type": "message", "input_tokens": usage["input_tokens"], "output_tokens": usage["output_tokens"],
             "cache_read_input_tokens": usage["cache_read_input_tokens"],
             "cache_creation_input_tokens": usage["cache_creation_input_tokens"]}]
    if managed.applied:
        message["context_management"] = {"applied_edits": list(managed.applied)}


__all__ = ["Managed", "add_to_message", "apply", "check", "sign"]
