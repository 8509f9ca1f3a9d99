"""What a request asks of the model beyond its messages: thinking, effort and server tools.

Built from the model table's :class:`~nbagent.engine.api_facts.models.Capabilities`, because the API answers
400 to a parameter a model refuses (a thinking budget on an adaptive-only model, an effort level it
does not know). A refused setting is a :class:`SettingNotSupported` raised when the setting is made,
before anything is sent. An unknown model gets what the user asked for, unchecked.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Mapping, Optional, Sequence, TypedDict, Union

from ..contracts.errors import NbAgentError
from .models import ModelInfo, get_model

if TYPE_CHECKING:  # the kernel's start imports this module: annotations only
    from typing_extensions import Required  # typing.Required is 3.11+

    from ..contracts.json_types import JSONObject, JSONValue

SERVER_TOOLS: dict[str, JSONObject] = {
    # Anthropic's server tools: the API runs them and returns their results in the same message.
    "web_search": {"type": "web_search_20250305", "name": "web_search", "max_uses": 5},
    "web_fetch": {"type": "web_fetch_20250910", "name": "web_fetch", "max_uses": 5},
}


class ThinkingConfigEnabledParam(TypedDict, total=False):
    """Extended thinking with a token budget (the SDK's ``ThinkingConfigEnabledParam``; a test compares them)."""

    budget_tokens: Required[int]
    type: Required[Literal["enabled"]]
    display: Optional[Literal["summarized", "omitted"]]


class ThinkingConfigAdaptiveParam(TypedDict, total=False):
    """Thinking as deep as the model judges, its depth steered by ``effort`` (the SDK's ``ThinkingConfigAdaptiveParam``)."""

    type: Required[Literal["adaptive"]]
    display: Optional[Literal["summarized", "omitted"]]


ThinkingParam = Union[ThinkingConfigEnabledParam, ThinkingConfigAdaptiveParam]
"""The request's ``thinking`` parameter, as nbagent sends it."""


class SettingNotSupported(NbAgentError):
    """A setting the model refuses (the API would answer 400), caught before sending."""


@dataclass(frozen=True)
class ReasoningParams:
    """The ``thinking`` and ``output_config.effort`` parameters of a request (None: not sent)."""

    thinking: ThinkingParam | None = None
    effort: str | None = None


def reasoning_params(model: str, thinking_budget: int | None, effort: str | None,
                     models: Mapping[str, ModelInfo] | None = None) -> ReasoningParams:
    """The thinking/effort parameters for ``model``; raises :class:`SettingNotSupported` for a
    setting the model refuses, naming what it takes instead."""
    info = get_model(model, models)
    if info is None:
        thinking: ThinkingParam | None = \
            {"type": "enabled", "budget_tokens": thinking_budget} if thinking_budget else None
        return ReasoningParams(thinking, effort)
    caps = info.capabilities
    if thinking_budget and not caps.thinking_budget:
        instead = (f"set its depth with effort={'|'.join(caps.effort_levels)} (%%agent --effort LEVEL)"
                   if caps.effort_levels else "leave thinking_budget unset")
        raise SettingNotSupported(
            f"{info.id} thinks adaptively and refuses thinking budgets (the API answers 400); "
            f"{instead}, or pick a model that takes budgets (e.g. claude-haiku-4-5)")
    if effort is not None and effort not in caps.effort_levels:
        takes = f"it takes {', '.join(caps.effort_levels)}" if caps.effort_levels else "it has no effort control"
        raise SettingNotSupported(f"{info.id} refuses effort={effort!r}: {takes}")
    if thinking_budget:
        return ReasoningParams({"type": "enabled", "budget_tokens": thinking_budget}, effort)
    if effort is not None and caps.adaptive_thinking:
        return ReasoningParams({"type": "adaptive"}, effort)  # effort steers adaptive thinking
    return ReasoningParams(None, effort)


def lenient_reasoning_params(model: str, thinking_budget: int | None, effort: str | None,
                             models: Mapping[str, ModelInfo] | None = None) -> ReasoningParams:
    """As :func:`reasoning_params`, dropping what the model refuses: for a fallback model, which
    was not the one the settings were checked against."""
    try:
        return reasoning_params(model, thinking_budget, effort, models)
    except SettingNotSupported:
        try:
            return reasoning_params(model, None, effort, models)
        except SettingNotSupported:
            return ReasoningParams()


def server_tool_definitions(names: Sequence[str | Mapping[str, JSONValue]]) -> list[JSONObject]:
    """API definitions of the server tools asked for by name (a dict is passed through as is)."""
    out: list[JSONObject] = []
    for item in names:
        if isinstance(item, Mapping):
            out.append(dict(item))
        elif item in SERVER_TOOLS:
            out.append(dict(SERVER_TOOLS[item]))
        else:
            raise SettingNotSupported(f"unknown server tool {item!r}; known: {', '.join(SERVER_TOOLS)} "
                                      "(or pass the tool's API definition as a dict)")
    return out
