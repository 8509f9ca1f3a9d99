"""Request validation: reject what the Messages API rejects on the basics, with its kind of message.

Checked: model and max_tokens present (max_tokens within the model's output limit), thinking budget,
system and tools shapes, messages non-empty with user/assistant roles, non-empty text blocks, the
first message from the user, thinking blocks passed back with their signature (and, for one this
API issued, with the thinking exactly as it was sent), images within the API's size (5 MB of base64,
8,000 px a side), and, after merging consecutive same-role
messages as the API does, every ``tool_use`` answered by a ``tool_result`` in the next message (and
no stray results).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Collection, Literal, Mapping, Union, cast

from nbagent.engine.api_facts.models import ModelInfo, get_model

from ...engine.api_facts.caching import MAX_BREAKPOINTS, count_breakpoints, ttl_order_error
from ...engine.api_facts.images import (
    MAX_IMAGE_BASE64_CHARS,
    MAX_IMAGE_SIDE_PX,
    image_data,
    refused_image,
    sniffed_media_type,
)
from ...engine.api_facts.many_images import MANY_IMAGES_SIDE_PX, within_many_image_limit
from ...engine.contracts.json_types import JSONObject, JSONValue
from ...engine.contracts.message_types import MessageParam, TextBlockParam

if TYPE_CHECKING:  # typing.Required is 3.11+
    from typing_extensions import Required, TypedDict
else:
    from typing import TypedDict


class RequestBody(TypedDict, total=False):
    """A Messages request as :func:`validate` let it through: the fields it checked have these
    shapes; the others are the client's JSON, read with a narrowing check."""

    model: str
    """Always there once validated; not ``Required`` so that a responder can be called without one."""
    messages: Required[list[MessageParam]]
    max_tokens: int
    system: Union[str, list[TextBlockParam]]
    tools: list[JSONObject]
    thinking: JSONObject
    output_config: JSONObject
    tool_choice: JSONObject
    context_management: JSONObject
    stream: bool


class ApiError(Exception):
    """An error the API answers as a JSON error body with this status."""

    def __init__(self, status: int, type: str, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.status, self.type, self.message, self.retry_after = status, type, message, retry_after


def _bad(message: str) -> ApiError:
    return ApiError(400, "invalid_request_error", message)


Signed = Mapping[str, Collection[str]]
"""Signatures the API issued, each with the thinking text(s) it was sent with."""


def validate(body: JSONObject, count_only: bool = False, signed: Signed | None = None) -> RequestBody:
    """Reject what the API rejects on the basics, with messages shaped like its own, and return the
    body typed as what it was checked to be. ``signed``: the thinking blocks this API issued; one
    passed back with other thinking fails its signature check."""
    if not body.get("model"):
        raise _bad("model: Field required")
    max_tokens = body.get("max_tokens")
    info = get_model(str(body["model"]))
    if not count_only:
        if max_tokens is None:
            raise _bad("max_tokens: Field required")
        if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1:
            raise _bad("max_tokens: Input should be an integer greater than or equal to 1")
        if info is not None and max_tokens > info.max_output:
            raise _bad(f"max_tokens: {max_tokens} > {info.max_output}, which is the maximum allowed "
                       f"number of output tokens for {info.id}")
    thinking = body.get("thinking")
    if isinstance(thinking, dict) and _kind(thinking) == "enabled":
        _check_budget(thinking.get("budget_tokens"), max_tokens)
    system = body.get("system")
    if system is not None and not isinstance(system, (str, list)):
        raise _bad("system: Input should be a valid string or a list of text blocks")
    tools = body.get("tools")
    if tools is not None and (not isinstance(tools, list)
                              or not all(isinstance(t, dict) and t.get("name") for t in tools)):
        raise _bad("tools: each tool must be an object with a `name`")
    _validate_messages(body.get("messages"), signed or {})
    if info is not None:
        _validate_capabilities(body, info)
    found = count_breakpoints(body)
    if found > MAX_BREAKPOINTS:
        raise _bad(f"A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be provided. Found {found}.")
    if (order := ttl_order_error(body)) is not None:
        raise _bad(order)
    # The checks above make it true: model a non-empty string (read as one), messages a list of
    # user/assistant messages of well-formed blocks, system a string or list, tools named objects.
    return cast("RequestBody", body)


def _check_budget(budget: JSONValue | None, max_tokens: JSONValue | None) -> None:
    """An ``enabled`` thinking budget: at least 1024, below ``max_tokens``."""
    if not isinstance(budget, int) or budget < 1024:
        raise _bad("thinking.enabled.budget_tokens: Input should be greater than or equal to 1024")
    if isinstance(max_tokens, int) and budget >= max_tokens:
        raise _bad("`max_tokens` must be greater than `thinking.budget_tokens`")


def _kind(value: object) -> str | None:
    """The ``type`` of an object of the request (a block, ``thinking``, ``tool_choice``), if it has one."""
    match value:
        case {"type": str(kind)}:
            return kind
    return None


def _validate_capabilities(body: JSONObject, info: ModelInfo) -> None:
    """The 400s a model answers for parameters it refuses (the model table's capabilities)."""
    caps, name = info.capabilities, info.id
    kind = _kind(body.get("thinking"))
    if kind == "enabled" and not caps.thinking_budget:
        raise _bad(f'thinking.type: "enabled" is not supported for {name}; use thinking.type "adaptive" '
                   "and output_config.effort to control thinking depth")
    if kind == "adaptive" and not caps.adaptive_thinking:
        raise _bad(f'thinking.type: "adaptive" is not supported for {name}')
    if kind == "disabled" and caps.thinking_always_on:
        raise _bad(f"thinking cannot be disabled for {name}")
    output_config = body.get("output_config") or {}
    effort = output_config.get("effort") if isinstance(output_config, dict) else None
    if effort is not None and effort not in caps.effort_levels:
        raise _bad(f"output_config.effort: {effort!r} is not supported for {name}")
    if not caps.sampling and any(k in body for k in ("temperature", "top_p", "top_k")):
        raise _bad(f"temperature, top_p and top_k cannot be set for {name}")
    if not caps.forced_tool_choice and _kind(body.get("tool_choice")) in ("any", "tool"):
        raise _bad(f"forced tool use (tool_choice any/tool) is not supported for {name}")
    messages = body.get("messages")
    if not caps.prefill and isinstance(messages, list) and messages and _is_prefill(messages[-1]):
        raise _bad(f"assistant message prefill is not supported for {name}; the last message must be from the user")


def _is_prefill(message: JSONValue) -> bool:
    """A final assistant message, except a paused server-tool turn sent back to continue."""
    match message:
        case {"role": "assistant", "content": list(content)}:
            return not any(_kind(b) == "server_tool_use" for b in content)
        case {"role": "assistant"}:
            return True
    return False


def _check_thinking(where: str, block: JSONObject, signed: Signed) -> None:
    """A thinking block comes back as it was sent: its text (empty when display was omitted) and
    the signature that vouches for it."""
    if not isinstance(block.get("thinking"), str):
        raise _bad(f"{where}.thinking.thinking: Field required")
    signature = block.get("signature")
    if not isinstance(signature, str) or not signature:
        raise _bad(f"{where}.thinking.signature: Field required")
    if signature in signed and block["thinking"] not in signed[signature]:
        raise _bad(f"{where}: Invalid `signature` in `thinking` block")


_Located = list[tuple[int, int, JSONObject]]  # (message index, block index, block)
Role = Literal["user", "assistant"]


def _message_blocks(i: int, message: JSONValue, last: bool, signed: Signed) -> tuple[Role, _Located]:
    if not isinstance(message, dict):
        raise _bad(f"messages.{i}: Input should be an object")
    role = message.get("role")
    if role == "system":
        raise _bad('messages: Unexpected role "system". The Messages API accepts a top-level `system` '
                   'parameter, not "system" as an input message role.')
    if role != "user" and role != "assistant":
        raise _bad(f"messages.{i}.role: Input should be 'user' or 'assistant'")
    content = message.get("content")
    if isinstance(content, str):
        blocks: list[JSONValue] = [{"type": "text", "text": content}] if content else []
    elif isinstance(content, list):
        blocks = content
    else:
        raise _bad(f"messages.{i}.content: Input should be a valid string or list of content blocks")
    if not blocks and not (last and role == "assistant"):
        raise _bad(f"messages.{i}: all messages must have non-empty content except for the optional "
                   "final assistant message")
    located: _Located = []
    for j, b in enumerate(blocks):
        if not isinstance(b, dict) or _kind(b) is None:
            raise _bad(f"messages.{i}.content.{j}: Input should be a content block object with a `type`")
        _check_block(f"messages.{i}.content.{j}", b, signed)
        located.append((i, j, b))
    return ("user" if role == "user" else "assistant"), located


def _check_image(where: str, block: JSONObject) -> None:
    """An image within the API's limits (:func:`~nbagent.engine.api_facts.images.refused_image`), also
    inside a tool result: the API answers 400 to a larger one, and to every request that repeats it."""
    source, data, media = block.get("source"), image_data(block), sniffed_media_type(block)
    if isinstance(source, dict) and media is not None and source.get("media_type") != media:
        raise _bad(f"{where}.image.source.base64.data: Image does not match the provided media type {source.get('media_type')}")
    if data is None or refused_image(block) is None:
        return
    if len(data) > MAX_IMAGE_BASE64_CHARS:
        raise _bad(f"{where}.image.source.base64: image exceeds 5 MB maximum: {len(data)} bytes > "
                   f"{MAX_IMAGE_BASE64_CHARS} bytes")
    raise _bad(f"{where}.image.source.base64.data: image dimensions exceed max allowed size: {MAX_IMAGE_SIDE_PX} pixels")


def _check_block(where: str, block: JSONObject, signed: Signed) -> None:
    """A text block has text that is not blank, a thinking block its signed thinking, a redacted
    one its data, an image (also in a tool result) the API's size."""
    match block:
        case {"type": "text"}:
            text = block.get("text")
            if not isinstance(text, str) or not text:
                raise _bad(f"{where}.text: text content blocks must be non-empty")
            if text.isspace():
                raise _bad(f"{where}.text: text content blocks must contain non-whitespace text")
        case {"type": "thinking"}:
            _check_thinking(where, block, signed)
        case {"type": "redacted_thinking"} if not (isinstance(block.get("data"), str) and block["data"]):
            raise _bad(f"{where}.redacted_thinking.data: Field required")
        case {"type": "image"}:
            _check_image(where, block)
        case {"type": "tool_result", "content": list(parts)}:
            for k, part in enumerate(parts):
                if isinstance(part, dict) and part.get("type") == "image":
                    _check_image(f"{where}.content.{k}", part)


def _validate_messages(messages: JSONValue | None, signed: Signed) -> None:
    if messages is None:
        raise _bad("messages: Field required")
    if not isinstance(messages, list) or not messages:
        raise _bad("messages: at least one message is required")
    # Consecutive messages of one role are merged, as the API does, before pairing tool calls.
    merged: list[tuple[Role, _Located]] = []
    for i, message in enumerate(messages):
        role, blocks = _message_blocks(i, message, i == len(messages) - 1, signed)
        if merged and merged[-1][0] == role:
            merged[-1][1].extend(blocks)
        else:
            merged.append((role, blocks))
    if merged[0][0] != "user":
        raise _bad('messages: first message must use the "user" role')
    if within_many_image_limit(cast("list[MessageParam]", messages)) is not messages:  # past 20 images: 2,000 px a side
        raise _bad(f"messages: image dimensions exceed max allowed size for many-image requests: {MANY_IMAGES_SIDE_PX} pixels")
    for k, (role, blocks) in enumerate(merged):
        if role == "assistant":
            uses = [str(b.get("id")) for _, _, b in blocks if b["type"] == "tool_use"]
            after = merged[k + 1][1] if k + 1 < len(merged) else []
            answered = {str(b.get("tool_use_id")) for _, _, b in after if b["type"] == "tool_result"}
            missing = [u for u in uses if u not in answered]
            if missing:
                raise _bad(f"messages.{blocks[-1][0]}: `tool_use` ids were found without `tool_result` blocks "
                           f"immediately after: {', '.join(missing)}. Each `tool_use` block must have a "
                           "corresponding `tool_result` block in the next message.")
            continue
        before = merged[k - 1][1] if k else []
        offered = {str(b.get("id")) for _, _, b in before if b["type"] == "tool_use"}
        for i, j, b in blocks:
            if b["type"] == "tool_result" and str(b.get("tool_use_id")) not in offered:
                raise _bad(f"messages.{i}.content.{j}: unexpected `tool_use_id` found in `tool_result` blocks: "
                           f"{b.get('tool_use_id')}. Each `tool_result` block must have a corresponding "
                           "`tool_use` block in the previous message.")
