"""The ``context_management`` parameter's shapes as TypedDicts, mirroring the SDK's beta types
(``BetaContextManagementConfigParam``, ``BetaClearToolUses20250919EditParam``,
``BetaClearThinking20251015EditParam``, ``BetaCompact20260112EditParam`` and their triggers; the
engine does not import the SDK, and ``tests/providers/test_context_management_types.py`` checks what
the context policy builds against the SDK's). Plain dicts at run time.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, Optional, TypedDict, Union

if TYPE_CHECKING:  # annotations are strings at run time; typing.Required is 3.11+
    from typing_extensions import Required


class InputTokensParam(TypedDict):
    """A count of input tokens (a trigger, or ``clear_at_least``)."""

    type: Literal["input_tokens"]
    value: int


class ToolUsesParam(TypedDict):
    """A count of tool uses (``keep``, or a trigger)."""

    type: Literal["tool_uses"]
    value: int


class ThinkingTurnsParam(TypedDict):
    """A count of assistant turns whose thinking is kept."""

    type: Literal["thinking_turns"]
    value: int


class AllThinkingTurnsParam(TypedDict):
    """Keep the thinking of every turn."""

    type: Literal["all"]


class ClearToolUsesEditParam(TypedDict, total=False):
    """``clear_tool_uses_20250919``: old tool results (and, with ``clear_tool_inputs``, inputs) cleared."""

    type: Required[Literal["clear_tool_uses_20250919"]]
    clear_at_least: Optional[InputTokensParam]
    clear_tool_inputs: Union[bool, list[str], None]
    exclude_tools: Optional[list[str]]
    keep: ToolUsesParam
    trigger: Union[InputTokensParam, ToolUsesParam]


class ClearThinkingEditParam(TypedDict, total=False):
    """``clear_thinking_20251015``: thinking of older turns cleared."""

    type: Required[Literal["clear_thinking_20251015"]]
    keep: Union[ThinkingTurnsParam, AllThinkingTurnsParam, Literal["all"]]


class CompactEditParam(TypedDict, total=False):
    """``compact_20260112``: the server summarises the conversation past ``trigger``."""

    type: Required[Literal["compact_20260112"]]
    instructions: Optional[str]
    pause_after_compaction: bool
    trigger: Optional[InputTokensParam]


ContextEdit = Union[ClearToolUsesEditParam, ClearThinkingEditParam, CompactEditParam]
"""One edit of ``context_management.edits`` (told apart by ``type``)."""


class ContextManagementParam(TypedDict, total=False):
    """The request's ``context_management`` parameter."""

    edits: list[ContextEdit]


class AppliedEdit(TypedDict, total=False):
    """One entry of the response's ``context_management.applied_edits``: what an edit cleared
    (``cleared_tool_uses`` for ``clear_tool_uses``, ``cleared_thinking_turns`` for ``clear_thinking``)."""

    type: Required[str]
    cleared_input_tokens: int
    cleared_tool_uses: int
    cleared_thinking_turns: int


__all__ = ["AllThinkingTurnsParam", "AppliedEdit", "ClearThinkingEditParam", "ClearToolUsesEditParam",
           "CompactEditParam", "ContextEdit", "ContextManagementParam", "InputTokensParam", "ThinkingTurnsParam",
           "ToolUsesParam"]
