"""The engine's message TypedDicts mirror the SDK's param TypedDicts (the engine may not import the
SDK, so it keeps its own copy): same fields, same required fields. A new SDK field, a renamed one or
a field that became required fails here, so the copy cannot drift silently."""

from __future__ import annotations

import typing
from typing import Any

import anthropic.types as sdk
import anthropic.types.beta as beta
import pytest

from nbagent.engine.contracts import messages as m

PAIRS = [
    (m.CacheControlEphemeralParam, sdk.CacheControlEphemeralParam),
    (m.TextBlockParam, sdk.TextBlockParam),
    (m.ImageBlockParam, sdk.ImageBlockParam),
    (m.DocumentBlockParam, sdk.DocumentBlockParam),
    (m.ThinkingBlockParam, sdk.ThinkingBlockParam),
    (m.RedactedThinkingBlockParam, sdk.RedactedThinkingBlockParam),
    (m.ToolUseBlockParam, sdk.ToolUseBlockParam),
    (m.ToolResultBlockParam, sdk.ToolResultBlockParam),
    (m.ServerToolUseBlockParam, sdk.ServerToolUseBlockParam),
    (m.WebSearchToolResultBlockParam, sdk.WebSearchToolResultBlockParam),
    (m.WebFetchToolResultBlockParam, sdk.WebFetchToolResultBlockParam),
    (m.CompactionBlockParam, beta.BetaCompactionBlockParam),
    (m.MessageParam, sdk.UserMessageParam),
    (m.MessageParam, sdk.AssistantMessageParam),
]


def _required(td: Any) -> set[str]:
    """Required keys, whether ``Required[...]`` was evaluated or is still a string (both modules
    use ``from __future__ import annotations``, which hides it from ``__required_keys__``)."""
    found = set(td.__required_keys__) if td.__total__ else set()
    for key, ann in td.__annotations__.items():
        text = getattr(ann, "__forward_arg__", ann if isinstance(ann, str) else repr(ann))
        if str(text).startswith(("Required[", "typing.Required[", "typing_extensions.Required[")):
            found.add(key)
    return found


@pytest.mark.parametrize("ours, theirs", PAIRS, ids=lambda t: t.__name__)
def test_fields_match_the_sdk(ours: Any, theirs: Any) -> None:
    assert set(ours.__annotations__) == set(theirs.__annotations__)
    assert _required(ours) == _required(theirs)
    assert ours.__total__ == theirs.__total__


def test_every_block_type_mirrors_an_sdk_block_type() -> None:
    sdk_names = {t.__name__ for t in typing.get_args(sdk.ContentBlockParam)}
    # Blocks only the beta API has (server compaction) mirror the beta type of the same name.
    sdk_names |= {t.__name__.removeprefix("Beta") for t in typing.get_args(beta.BetaContentBlockParam)
                  if t.__name__ == "BetaCompactionBlockParam"}
    ours = typing.get_args(m.ContentBlock)
    assert {t.__name__ for t in ours} <= sdk_names
    assert {t for t in ours} <= {o for o, _ in PAIRS}  # each one is compared above


def test_the_types_are_plain_dicts_at_run_time() -> None:
    block = m.TextBlockParam(type="text", text="hi")
    assert type(block) is dict and block == {"type": "text", "text": "hi"}
