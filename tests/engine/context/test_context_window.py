"""Window sizes, the compact threshold and truncation ranges: Cline's arithmetic, to the digit."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nbagent.engine.api_facts.cost import Usage
from nbagent.engine.context import (
    ContextWindowInfo,
    RequestUsage,
    get_context_window_info,
    get_next_truncation_range,
    should_compact_context_window,
)


def alternating(n: int) -> list[dict]:
    return [{"role": "user" if i % 2 == 0 else "assistant", "content": f"m{i}"} for i in range(n)]


# -- window info ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("window", "context_window", "max_allowed"),
    [
        (64_000, 64_000, 37_000),
        (128_000, 128_000, 98_000),
        (200_000, 200_000, 160_000),
        (1_000_000, 1_000_000, 960_000),
        (131_072, 131_072, 104_857.6),
        (0, 128_000, 98_000),
        (None, 128_000, 98_000),
        (100_000, 100_000, 80_000),  # 0.8 wins below 200k
        (4_000, 4_000, 3_200),  # the demo window
    ],
)
def test_window_info(window, context_window, max_allowed):
    info = get_context_window_info(window)
    assert info == ContextWindowInfo(context_window, max_allowed)
    assert info.max_allowed_size == max_allowed


def test_131072_is_not_rounded():
    assert get_context_window_info(131_072).max_allowed_size == pytest.approx(104_857.6, abs=0)
    assert get_context_window_info(131_072).max_allowed_size != 104_857


# -- compact threshold ---------------------------------------------------------------------------


def test_compact_uses_max_allowed_without_percentage():
    assert not should_compact_context_window(159_999, 200_000)
    assert should_compact_context_window(160_000, 200_000)
    assert should_compact_context_window(160_000, 200_000, 0)  # 0 means "not given"


def test_compact_percentage_floors_and_is_capped_by_max_allowed():
    # floor(200000 * 0.5) = 100000 < 160000
    assert not should_compact_context_window(99_999, 200_000, 0.5)
    assert should_compact_context_window(100_000, 200_000, 0.5)
    # 0.95 * 200000 = 190000 > 160000 → capped at 160000
    assert should_compact_context_window(160_000, 200_000, 0.95)
    # floor(131072 * 0.333) = 43646 (43646.976)
    assert math.floor(131_072 * 0.333) == 43_646
    assert should_compact_context_window(43_646, 131_072, 0.333)
    assert not should_compact_context_window(43_645, 131_072, 0.333)


def test_compact_window_defaults_and_no_previous_request():
    assert should_compact_context_window(98_000, 0)
    assert not should_compact_context_window(97_999, None)
    assert not should_compact_context_window(None, 200_000)


def test_request_usage_total_and_from_usage():
    u = RequestUsage(ts=7, input_tokens=1, output_tokens=20, cache_creation_input_tokens=300, cache_read_input_tokens=4000)
    assert u.total == 4321
    api = Usage(input_tokens=1, output_tokens=20, cache_creation_input_tokens=300, cache_read_input_tokens=4000)
    assert RequestUsage.from_usage(7, api) == u


# -- truncation range ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("n", "keep", "expected"),
    [
        # R = n - 2
        (10, "none", (2, 9)),
        (10, "last_two", (2, 7)),
        (10, "half", (2, 5)),  # R=8 → 4 removed → end 5
        (10, "quarter", (2, 7)),  # R=8 → floor(3*8/8)*2 = 6 → end 7
        (11, "none", (2, 9)),  # end 10 is a user message → 9
        (11, "last_two", (2, 7)),  # R=9 → remove 7 → end 8 (user) → 7
        (11, "half", (2, 5)),  # R=9 → 9//4*2 = 4
        (11, "quarter", (2, 7)),  # R=9 → 27//8=3 → 6
        (2, "none", (2, 1)),
        (3, "none", (2, 1)),  # end 2 is user → 1
        (4, "last_two", (2, 1)),
        (5, "half", (2, 1)),
        (5, "quarter", (2, 3)),  # R=3 → 9//8=1 → 2 removed → end 3, an assistant message
    ],
)
def test_ranges_from_no_range(n, keep, expected):
    assert get_next_truncation_range(alternating(n), None, keep) == expected


def test_ranges_extend_an_existing_range():
    msgs = alternating(30)
    # start_of_rest = 10, R = 20
    assert get_next_truncation_range(msgs, (2, 9), "half") == (2, 19)  # 20//4*2 = 10 → end 19
    assert get_next_truncation_range(msgs, (2, 9), "quarter") == (2, 23)  # 60//8=7 → 14 → end 23
    assert get_next_truncation_range(msgs, [2, 9], "none") == (2, 29)
    assert get_next_truncation_range(msgs, (2, 9), "last_two") == (2, 27)
    # the range start is ignored, only the end matters
    assert get_next_truncation_range(msgs, (5, 9), "half") == (2, 19)


def test_no_op_range():
    msgs = alternating(4)
    assert get_next_truncation_range(msgs, (2, 1), "half") == (2, 1)  # R=2 → 0 removed
    assert get_next_truncation_range(msgs, None, "half") == (2, 1)


def test_stale_range_negative_r_no_clamp():
    msgs = alternating(5)
    # start_of_rest = 10, R = -5: half → (-5 // 4) * 2 = -4 → end = 5 (out of range: no step back)
    assert get_next_truncation_range(msgs, (2, 9), "half") == (2, 5)
    # quarter → (3 * -5 // 8) * 2 = -4 → end 5
    assert get_next_truncation_range(msgs, (2, 9), "quarter") == (2, 5)
    # none/last_two clamp at zero: end = 9
    assert get_next_truncation_range(msgs, (2, 9), "none") == (2, 9)
    assert get_next_truncation_range(msgs, (2, 9), "last_two") == (2, 9)
    # R = -1 with two messages: half → -2 → end 0, a user message → -1 (one decrement, in range)
    assert get_next_truncation_range(alternating(2), (2, 2), "half") == (2, -1)
    # R = -1, quarter: (3 * -1 // 8) * 2 = -2 → same
    assert get_next_truncation_range(alternating(2), (2, 2), "quarter") == (2, -1)


def test_one_decrement_only():
    # consecutive user messages: the step back happens once even if it lands on a user message
    msgs = [{"role": r, "content": "x"} for r in ["user", "assistant", "user", "user", "user", "assistant"]]
    assert get_next_truncation_range(msgs, None, "last_two") == (2, 2)  # R=4 → 2 → end 3 (user) → 2


def test_unknown_keep_is_an_error():
    with pytest.raises(ValueError):
        get_next_truncation_range(alternating(6), None, "third")  # type: ignore[arg-type]


def _cline(n_messages: int, roles: list[str], end_of_range: int | None, keep: str) -> tuple[int, int]:
    """A literal transcription of the spec's pseudo-code, with real division and floor."""
    start = end_of_range + 1 if end_of_range is not None else 2
    r = n_messages - start
    if keep == "none":
        remove = max(r, 0)
    elif keep == "last_two":
        remove = max(r - 2, 0)
    elif keep == "half":
        remove = math.floor(r / 4) * 2
    else:
        remove = math.floor(r * 3 / 4 / 2) * 2
    end = start + remove - 1
    if 0 <= end < n_messages and roles[end] != "assistant":
        end -= 1
    return (2, end)


@settings(max_examples=300, deadline=None)
@given(
    roles=st.lists(st.sampled_from(["user", "assistant"]), max_size=60),
    end=st.one_of(st.none(), st.integers(-3, 70)),
    keep=st.sampled_from(["none", "last_two", "half", "quarter"]),
)
def test_range_matches_spec_formula(roles, end, keep):
    msgs = [{"role": r, "content": "x"} for r in roles]
    rng = None if end is None else (2, end)
    assert get_next_truncation_range(msgs, rng, keep) == _cline(len(msgs), roles, end, keep)
