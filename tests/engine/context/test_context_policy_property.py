"""Property: whatever the session and the context policy, every layer's result is API-valid, and
a rollback to any earlier timestamp rebuilds exactly the request of that moment."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from nbagent.engine.context import ContextManager, RequestUsage, get_next_truncation_range
from nbagent.engine.context.mask import mask_old_results
from nbagent.engine.contracts.context_policy import ContextPolicy
from nbagent.engine.contracts.messages import ContentBlock, MessageParam, history_problems

TOOLS = ("python", "read_file", "shell")


@st.composite
def sessions(draw: st.DrawFn) -> list[MessageParam]:
    """A valid history: a task, then turns of text or parallel tool calls with results."""
    history: list[MessageParam] = [{"role": "user", "content": [{"type": "text", "text": "task"}]}]
    n = 0
    for _ in range(draw(st.integers(1, 14))):
        calls = draw(st.integers(0, 3))
        if not calls:
            history.append({"role": "assistant", "content": [{"type": "text", "text": "thinking aloud"}]})
            history.append({"role": "user", "content": [{"type": "text", "text": "go on"}]})
            continue
        uses: list[ContentBlock] = []
        results: list[ContentBlock] = []
        for _ in range(calls):
            n += 1
            uses.append({"type": "tool_use", "id": f"t{n}", "name": draw(st.sampled_from(TOOLS)), "input": {}})
            results.append({"type": "tool_result", "tool_use_id": f"t{n}",
                            "content": "data " * draw(st.integers(1, 3000))})
        history.append({"role": "assistant", "content": uses})
        history.append({"role": "user", "content": results})
    return history


policies = st.builds(
    lambda keep, clear, exclude, trunc: f"mask:keep={keep}:clear={clear}"
    + (f":exclude={exclude}" if exclude else "") + ("+truncate" if trunc else ""),
    st.integers(0, 4), st.integers(0, 5000), st.sampled_from(["", "python", "shell,read_file"]), st.booleans())


@settings(max_examples=60, deadline=None)
@given(sessions(), policies, st.lists(st.sampled_from(["half", "quarter"]), max_size=3))
def test_every_layer_keeps_the_history_api_valid_and_rollback_is_exact(history: list[MessageParam], spec: str,
                                                                       cuts: list[str]) -> None:
    policy = ContextPolicy.parse(spec)
    manager, rng = ContextManager(), None
    seen: list[tuple[int, str]] = []
    for ts, keep in enumerate(["mask", *cuts], start=1):
        if keep == "mask":
            mask_old_results(history, manager.updates, rng, policy.options, ts, previous_total=10**6)
        else:
            rng = get_next_truncation_range(history, rng, keep)  # type: ignore[arg-type]
            manager.apply_truncation_notice(ts, history)
        sent = manager.get_truncated_messages(history, rng)
        assert history_problems(sent) == [], (spec, keep)
        seen.append((ts, json.dumps(sent)))
        mask_old_results(history, manager.updates, rng, policy.options, ts, previous_total=10**6)
        seen[-1] = (ts, json.dumps(manager.get_truncated_messages(history, rng)))
    first_ts, first = seen[0]
    manager.truncate_context_history(first_ts)
    # The first step's range was None: with the updates of that moment the request is what it was.
    assert json.dumps(manager.get_truncated_messages(history, None)) == first
    # and the usage-driven entry point stays valid after any policy
    result = manager.get_new_context_messages_and_metadata(history, rng, RequestUsage(99, 10**6), context_window=2000)
    assert history_problems(result.truncated_messages) == []


def test_presets_and_options_parse_and_truncation_is_always_last() -> None:
    assert ContextPolicy.parse(None).layers == ("mask", "truncate")
    assert ContextPolicy.parse("cline").layers == ("truncate",)
    p = ContextPolicy.parse("summary:headroom=20k+mask:keep=3:exclude=python,shell")
    assert p.layers == ("mask", "summary", "truncate") and p.options.keep == 3
    assert p.options.exclude == ("python", "shell") and p.options.headroom == 20_000


def test_a_bad_policy_names_what_is_accepted() -> None:
    import pytest

    from nbagent.engine.contracts.context_policy import ContextPolicyError
    with pytest.raises(ContextPolicyError, match="layers are mask, edit, summary, compact, truncate"):
        ContextPolicy.parse("squash")
    with pytest.raises(ContextPolicyError, match="takes keep="):
        ContextPolicy.parse("mask:kept=3")
    with pytest.raises(ContextPolicyError, match="compact:trigger must be >= 50,000"):
        ContextPolicy.parse("compact:trigger=1000")
