"""A small class on one shared rate limit, as CI can run it: bench/bench_classroom.py with 12
agent processes against a loopback server whose limits are scaled to the class (10 requests and
8,000 input tokens per compressed minute: the same crowding as 60 students on 50 and 40,000)."""

from __future__ import annotations

import pytest

from tests.bench_module import load_bench


@pytest.mark.soak
def test_a_class_of_twelve_all_finish_without_a_failure_and_few_requests_are_refused() -> None:
    bench = load_bench("bench_classroom")
    result = bench.run_class(students=12, rpm=10, input_tpm=8_000, factor=6.0, agent_src=None)
    assert result["finished"] == 12, result
    assert result["reasons"] == ["end_turn"], result
    assert result["share_429"] <= 0.25, result


@pytest.mark.soak
def test_a_class_three_times_over_its_budget_on_one_machine_is_seldom_refused() -> None:
    # 12 processes on 4 requests a minute against the limiter written from the docs: as 60 on 20, the
    # class an independent limiter refused 53% of the time (40% with each kernel pacing alone).
    bench = load_bench("bench_classroom")
    result = bench.run_class(students=12, rpm=4, input_tpm=8_000, factor=6.0, agent_src=None, server="docs")
    assert result["finished"] == 12 and result["reasons"] == ["end_turn"], result
    # The goal is at most a quarter refused without a slower class (before: 40 % to 53 %); runs here
    # read a few percent, and one in six 14 % (12 processes on 2 cores), so the bound is the goal's.
    assert result["share_429"] <= 0.25 and result["total_over_min"] <= 1.3, result
