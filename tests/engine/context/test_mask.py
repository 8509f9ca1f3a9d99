"""The mask layer's cache anchor: the message before the first tool result still sent whole, where
the next masking will start changing the prompt."""

from __future__ import annotations

from typing import Any

from nbagent.engine.context.mask import cache_anchor, placeholder
from nbagent.engine.contracts.context_policy import LayerOptions


def history(results: list[tuple[str, str]]) -> list[dict[str, Any]]:
    """A task, then per (tool, content) a call and its result."""
    out: list[dict[str, Any]] = [{"role": "user", "content": [{"type": "text", "text": "task"}]}]
    for k, (tool, content) in enumerate(results):
        out.append({"role": "assistant", "content": [{"type": "tool_use", "id": f"t{k}", "name": tool, "input": {}}]})
        out.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{k}", "content": content}]})
    return out


def test_the_anchor_is_the_call_before_the_first_result_sent_whole() -> None:
    masked = placeholder("load", 5000)
    messages = history([("load", masked), ("load", masked), ("load", "rows"), ("load", "more"), ("load", "x"),
                        ("load", "y")])
    assert cache_anchor(messages, LayerOptions()) == 5  # results at 2 and 4 are placeholders


def test_results_of_excluded_tools_never_move_the_anchor() -> None:
    messages = history([("read", "kept"), ("load", "rows"), ("load", "x"), ("load", "y"), ("load", "z")])
    assert cache_anchor(messages, LayerOptions()) == 1
    assert cache_anchor(messages, LayerOptions(exclude=("read",))) == 3


def test_no_anchor_among_the_last_three_messages_or_without_results() -> None:
    masked = placeholder("load", 5000)
    assert cache_anchor(history([("load", masked), ("load", masked), ("load", "new")]), LayerOptions()) is None
    assert cache_anchor(history([("load", masked)] * 4), LayerOptions()) is None
    assert cache_anchor([{"role": "user", "content": "hi"}], LayerOptions()) is None
