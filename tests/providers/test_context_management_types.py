"""The ``context_management`` parameter the context policy builds has the shape of the SDK's own
beta types (``anthropic.types.beta``): every key one the SDK's TypedDict declares, its required
keys present, each value valid for its declared type. The engine may not import the SDK, so a
renamed or retyped field (``clear_tool_inputs`` is a bool or a list of names) fails here."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import anthropic.types.beta as beta
import pydantic
import pytest

from nbagent.engine.contracts.context_policy import ContextPolicy

EDIT_TYPES: dict[str, Any] = {
    "clear_tool_uses_20250919": beta.BetaClearToolUses20250919EditParam,
    "clear_thinking_20251015": beta.BetaClearThinking20251015EditParam,
    "compact_20260112": beta.BetaCompact20260112EditParam,
}


def check_shape(edit: Mapping[str, object]) -> None:
    sdk = EDIT_TYPES[str(edit["type"])]
    assert set(edit) <= set(sdk.__annotations__), f"keys the SDK does not know: {set(edit) - set(sdk.__annotations__)}"
    assert {"type"} <= set(edit)
    pydantic.TypeAdapter(sdk).validate_python(edit)  # each value as the SDK types it


@pytest.mark.parametrize("spec", ["edit", "edit:inputs=1", "edit:inputs=python,read_file:exclude=notes",
                                  "edit:trigger=50000:keep=5:clear=10000+compact:trigger=60000", "all"])
@pytest.mark.parametrize("thinks", [False, True])
def test_the_policys_context_management_has_the_sdk_shape(spec: str, thinks: bool) -> None:
    edits = ContextPolicy.parse(spec).server_edits(thinks=thinks)
    assert edits is not None and set(edits) <= set(beta.BetaContextManagementConfigParam.__annotations__)
    for edit in edits["edits"]:
        check_shape(edit)


def test_clear_tool_inputs_is_typed_as_the_sdk_types_it() -> None:
    edits = ContextPolicy.parse("edit:inputs=python").server_edits(thinks=False)
    assert edits is not None
    [edit] = edits["edits"]
    check_shape(edit)
    with pytest.raises(pydantic.ValidationError):  # the SDK refuses what the policy never sends
        check_shape({**edit, "clear_tool_inputs": 3})


MIRRORS = [
    ("ClearToolUsesEditParam", beta.BetaClearToolUses20250919EditParam),
    ("ClearThinkingEditParam", beta.BetaClearThinking20251015EditParam),
    ("CompactEditParam", beta.BetaCompact20260112EditParam),
    ("ContextManagementParam", beta.BetaContextManagementConfigParam),
    ("InputTokensParam", beta.BetaInputTokensTriggerParam),
    ("ToolUsesParam", beta.BetaToolUsesKeepParam),
    ("ThinkingTurnsParam", beta.BetaThinkingTurnsParam),
    ("AllThinkingTurnsParam", beta.BetaAllThinkingTurnsParam),
]


@pytest.mark.parametrize("ours, theirs", MIRRORS, ids=lambda t: t if isinstance(t, str) else t.__name__)
def test_the_edit_typeddicts_mirror_the_sdks(ours: str, theirs: Any) -> None:
    """The engine's copies of the SDK's beta edit types (it may not import the SDK) keep its fields
    and its required fields, so a renamed or newly required field fails here."""
    from nbagent.engine.api_facts import context_edit_types
    from tests.providers.test_message_types import _required

    mine = getattr(context_edit_types, ours)
    assert set(mine.__annotations__) == set(theirs.__annotations__)
    assert _required(mine) == _required(theirs)


@pytest.mark.parametrize("ours, theirs", [("ThinkingConfigEnabledParam", "ThinkingConfigEnabledParam"),
                                          ("ThinkingConfigAdaptiveParam", "ThinkingConfigAdaptiveParam")])
def test_the_thinking_typeddicts_mirror_the_sdks(ours: str, theirs: str) -> None:
    import anthropic.types as sdk

    from nbagent.engine.api_facts import request_params
    from tests.providers.test_message_types import _required

    mine, sdks = getattr(request_params, ours), getattr(sdk, theirs)
    assert set(mine.__annotations__) == set(sdks.__annotations__) and _required(mine) == _required(sdks)
