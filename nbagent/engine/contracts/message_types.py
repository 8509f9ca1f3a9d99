"""The Messages API's message and block shapes as TypedDicts (moved out of messages.py, which
re-exports them with the helpers over them).

A message is ``{"role": "user" | "assistant", "content": str | list[block]}``. The TypedDicts mirror
the SDK's param types (``anthropic.types.MessageParam``, ``TextBlockParam``, …: same names, same
fields, ``total=False`` with ``Required`` where the SDK has them; a test compares the two) because
the engine does not import the SDK. They cost nothing at run time: a message is a plain dict.
Nested shapes the engine only passes along (an image's ``source``, citations, a server tool's
result content, a tool call's ``input``) are typed as JSON (:mod:`.json_types`): read them after
narrowing with ``isinstance``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, Optional, TypedDict, Union

from .json_types import JSONObject, JSONValue

if TYPE_CHECKING:  # annotations are strings at run time; typing.Required is 3.11+
    from typing_extensions import Required


class CacheControlEphemeralParam(TypedDict, total=False):
    """A prompt-cache breakpoint on a block."""

    type: Required[Literal["ephemeral"]]
    ttl: Literal["5m", "1h"]


class TextBlockParam(TypedDict, total=False):
    """Text (the API rejects an empty or whitespace-only one)."""

    text: Required[str]
    type: Required[Literal["text"]]
    cache_control: Optional[CacheControlEphemeralParam]
    citations: Optional[list[JSONObject]]


class ImageBlockParam(TypedDict, total=False):
    """An image (base64 or URL ``source``)."""

    source: Required[JSONObject]
    type: Required[Literal["image"]]
    cache_control: Optional[CacheControlEphemeralParam]
    transformations: Optional[JSONObject]


class DocumentBlockParam(TypedDict, total=False):
    """A document (PDF, plain text, …)."""

    source: Required[JSONObject]
    type: Required[Literal["document"]]
    cache_control: Optional[CacheControlEphemeralParam]
    citations: Optional[JSONObject]
    context: Optional[str]
    title: Optional[str]


class ThinkingBlockParam(TypedDict, total=False):
    """Extended thinking, sent back with its signature."""

    signature: Required[str]
    thinking: Required[str]
    type: Required[Literal["thinking"]]


class RedactedThinkingBlockParam(TypedDict, total=False):
    """Thinking the API encrypted."""

    data: Required[str]
    type: Required[Literal["redacted_thinking"]]


class ToolUseBlockParam(TypedDict, total=False):
    """A tool call of the model (``input`` as the model sent it)."""

    id: Required[str]
    input: Required[JSONObject]
    name: Required[str]
    type: Required[Literal["tool_use"]]
    cache_control: Optional[CacheControlEphemeralParam]
    caller: JSONObject
    toolset_name: Optional[str]


ToolResultContent = Union[TextBlockParam, ImageBlockParam, DocumentBlockParam]
"""What a tool result's list content may hold."""


class ToolResultBlockParam(TypedDict, total=False):
    """The answer to a ``tool_use``, in the next user message."""

    tool_use_id: Required[str]
    type: Required[Literal["tool_result"]]
    cache_control: Optional[CacheControlEphemeralParam]
    content: Union[str, list[ToolResultContent]]
    is_error: bool
    toolset_name: Optional[str]


class ServerToolUseBlockParam(TypedDict, total=False):
    """A tool the API runs itself (web search, web fetch, code execution)."""

    id: Required[str]
    input: Required[JSONObject]
    name: Required[str]
    type: Required[Literal["server_tool_use"]]
    cache_control: Optional[CacheControlEphemeralParam]
    caller: JSONObject


class WebSearchToolResultBlockParam(TypedDict, total=False):
    """What a server web search returned (a list of results, or an error object)."""

    content: Required[JSONValue]
    tool_use_id: Required[str]
    type: Required[Literal["web_search_tool_result"]]
    cache_control: Optional[CacheControlEphemeralParam]
    caller: JSONObject


class WebFetchToolResultBlockParam(TypedDict, total=False):
    """What a server web fetch returned (a document, or an error object)."""

    content: Required[JSONValue]
    tool_use_id: Required[str]
    type: Required[Literal["web_fetch_tool_result"]]
    cache_control: Optional[CacheControlEphemeralParam]
    caller: JSONObject


class CompactionBlockParam(TypedDict, total=False):
    """A server compaction's summary (the SDK's ``BetaCompactionBlockParam``, beta
    ``compact-2026-01-12``): everything before it is replaced by ``content`` on the server. It must
    go back exactly as received (``content``, ``signature``, ``encrypted_content``,
    ``tool_changes``), with the beta header; ``content`` None is a failed compaction (a no-op)."""

    type: Required[Literal["compaction"]]
    cache_control: Optional[CacheControlEphemeralParam]
    content: Optional[str]
    encrypted_content: Optional[str]
    signature: Optional[str]
    tool_changes: Optional[list[JSONObject]]


ContentBlock = Union[
    TextBlockParam, ImageBlockParam, DocumentBlockParam, ThinkingBlockParam, RedactedThinkingBlockParam,
    ToolUseBlockParam, ToolResultBlockParam, ServerToolUseBlockParam, WebSearchToolResultBlockParam,
    WebFetchToolResultBlockParam, CompactionBlockParam,
]
"""A block of a message's list content."""


class MessageParam(TypedDict, total=False):
    """One message of the conversation (the SDK's ``UserMessageParam`` / ``AssistantMessageParam``)."""

    content: Required[Union[str, list[ContentBlock]]]
    role: Required[Literal["user", "assistant"]]


Message = MessageParam
"""A message of the history (the name the engine uses)."""
