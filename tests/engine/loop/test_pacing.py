"""The client-side rate limit budget: when to wait before sending, and jitter."""

from __future__ import annotations

import pytest

from nbagent.engine.api_facts.rate_limits import Bucket, RateLimitSnapshot
from nbagent.engine.loop import pacing
from nbagent.engine.loop.pacing import RatePacer, full_jitter_backoff


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def snapshot(remaining: int, reset_s: float, limit: int = 50, **others: Bucket) -> RateLimitSnapshot:
    return RateLimitSnapshot({"requests": Bucket(limit, remaining, reset_s), **others})


def upper(low: float, high: float) -> float:
    return high


def test_without_headers_nothing_waits() -> None:
    assert RatePacer().pace_delay(1000).delay_s == 0


def test_alone_it_waits_only_for_what_the_next_request_needs() -> None:
    clock = Clock()
    pacer = RatePacer(clock, upper)
    for _ in range(3):
        pacer.sent()
    pacer.observe(snapshot(remaining=47, reset_s=3.6))  # its own three requests: nobody else
    assert not pacer.shared and pacer.pace_delay(10).delay_s == 0
    pacer.observe(RateLimitSnapshot({"input-tokens": Bucket(1000, 100, 54.0)}), uncached_input=400)
    decision = pacer.pace_delay(10_000)  # the last request's uncached input is the estimate
    assert decision.dimension == "input-tokens"
    assert decision.delay_s == pytest.approx(300 / (900 / 54.0))  # the deficit's refill, no more


def test_shared_and_low_it_waits_for_the_used_share_to_come_back_with_jitter() -> None:
    clock = Clock()
    pacer = RatePacer(clock, upper)
    pacer.sent()
    pacer.observe(snapshot(remaining=5, reset_s=54.0))  # 45 used, one of them its own: shared
    assert pacer.shared
    decision = pacer.pace_delay(10)
    assert decision.dimension == "requests" and decision.shared
    assert decision.delay_s == pytest.approx(54.0 * (1 + pacing.SPREAD))
    clock.now += 20  # time passed since the headers: that much less to wait
    assert pacer.pace_delay(10).delay_s == pytest.approx(34.0 * (1 + pacing.SPREAD))
    # a prompt that already waited waits less (down to the floor)
    assert pacer.pace_delay(10, age=1).delay_s == pytest.approx(34.0 * (1 + pacing.SPREAD) * (1 - pacing.AGEING))
    assert pacer.pace_delay(10, age=9).delay_s == pytest.approx(34.0 * (1 + pacing.SPREAD) * pacing.AGEING_FLOOR)


def test_shared_with_plenty_left_it_sends_at_once() -> None:
    pacer = RatePacer(Clock(), upper)
    pacer.observe(snapshot(remaining=30, reset_s=24.0))
    assert pacer.shared and pacer.pace_delay(10).delay_s == 0


def test_draws_spread_many_kernels_over_the_window() -> None:
    pacer = RatePacer(Clock())
    pacer.observe(snapshot(remaining=0, reset_s=60.0))
    delays = [pacer.pace_delay(10).delay_s for _ in range(200)]
    assert all(60.0 <= d <= 60.0 * (1 + pacing.SPREAD) for d in delays)
    assert len({round(d, 3) for d in delays}) > 150  # not in step


def test_retry_after_is_honoured_exactly_plus_at_most_a_tenth_and_a_second() -> None:
    pacer = RatePacer(Clock())
    waits = [pacer.retry_after_delay(3.0) for _ in range(100)]
    assert all(3.0 <= w <= 3.3 for w in waits) and len(set(waits)) > 50
    assert all(30.0 <= pacer.retry_after_delay(30.0) <= 31.0 for _ in range(50))


def test_full_jitter_backoff_stays_under_the_doubling_ceiling_and_the_cap() -> None:
    for attempt, ceiling in ((1, 2.0), (2, 4.0), (3, 8.0), (6, 10.0)):
        draws = [full_jitter_backoff(attempt, 10.0) for _ in range(100)]
        assert all(0.0 <= d <= ceiling for d in draws) and max(draws) > ceiling / 2
    assert full_jitter_backoff(3, 60.0, None) == 8.0  # without jitter: the ceiling


def test_jitter_off_gives_the_deterministic_schedule(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pacing, "JITTER", False)
    pacer = RatePacer(Clock())
    assert pacer.retry_after_delay(3.0) == 3.0
    pacer.observe(snapshot(remaining=0, reset_s=60.0))
    assert pacer.pace_delay(10).delay_s == 60.0


def test_sessions_of_one_provider_share_one_pacer() -> None:
    class Provider:
        name = "p"

    a, b = Provider(), Provider()
    assert pacing.pacer_for(a) is pacing.pacer_for(a)
    assert pacing.pacer_for(a) is not pacing.pacer_for(b)


def test_a_429_without_headers_empties_the_known_buckets_so_the_resend_is_paced() -> None:
    clock = Clock()
    pacer = RatePacer(clock, upper)
    pacer.sent()
    pacer.observe(snapshot(remaining=30, reset_s=24.0))  # 20 used, one its own: shared, plenty left
    clock.now += 30  # the answer's headers are old: by now they say the bucket is full
    assert pacer.pace_delay(10).delay_s == 0
    pacer.refused(RateLimitSnapshot(retry_after_s=1.0))  # refused, and the 429 carried no budget
    decision = pacer.pace_delay(10)
    rate = 20 / 24.0
    assert decision.dimension == "requests" and decision.remaining == 0
    assert decision.delay_s == pytest.approx(50 / rate * (1 + pacing.SPREAD))  # the whole bucket's refill, spread


def test_a_429_with_headers_is_observed_like_an_answer_and_lengthens_the_paced_waits() -> None:
    clock = Clock()
    pacer, refused = RatePacer(clock, upper), RatePacer(clock, upper)
    for p in (pacer, refused):
        p.sent()
    pacer.observe(snapshot(remaining=2, reset_s=57.6))
    refused.refused(snapshot(remaining=2, reset_s=57.6))
    answered, after_refusal = pacer.pace_delay(10), refused.pace_delay(10)
    assert (after_refusal.dimension, after_refusal.remaining) == (answered.dimension, answered.remaining)
    assert answered.delay_s == pytest.approx(57.6 * (1 + pacing.SPREAD))
    assert after_refusal.delay_s == pytest.approx(57.6 * pacing.WIDEN * (1 + pacing.SPREAD))


def test_each_refusal_lengthens_the_waits_up_to_a_bound_while_the_bucket_stays_empty() -> None:
    clock = Clock()
    pacer = RatePacer(clock, upper)
    for _ in range(5):
        pacer.refused(snapshot(remaining=0, reset_s=60.0, limit=50))
    assert pacer.pace_delay(10).delay_s == pytest.approx(60.0 * pacing.WIDEST * (1 + pacing.SPREAD))
    pacer.observe(snapshot(remaining=1, reset_s=58.8), uncached_input=10)  # answered, the bucket still empty
    assert pacer.pace_delay(10).delay_s == pytest.approx(58.8 * pacing.WIDEST * (1 + pacing.SPREAD))
    for _ in range(4):  # answered with the bucket refilling: the crowd has gone, the waits shorten
        pacer.observe(snapshot(remaining=10, reset_s=48.0), uncached_input=10)
    assert pacer.pace_delay(10).delay_s == pytest.approx(48.0 * (1 + pacing.SPREAD))


def test_a_refusal_marks_the_key_shared_when_the_headers_state_no_requests_bucket() -> None:
    clock = Clock()
    pacer = RatePacer(clock, upper)
    tokens = RateLimitSnapshot({"input-tokens": Bucket(40_000, 39_000, 1.5)})
    pacer.sent()
    pacer.observe(tokens, uncached_input=700)
    assert not pacer.shared and pacer.pace_delay(700).delay_s == 0
    pacer.refused(RateLimitSnapshot(tokens.buckets, retry_after_s=1.0))  # refused by a bucket it is not told of
    assert pacer.shared
    assert pacer.pace_delay(700).delay_s > 1.5  # spread over the budget's refill, not sent at once


def test_a_kernel_alone_refused_by_its_own_budget_still_waits_only_for_its_deficit() -> None:
    clock = Clock()
    pacer = RatePacer(clock, upper)
    pacer.sent()  # its one request this minute, and the requests bucket says just that
    pacer.refused(RateLimitSnapshot({"requests": Bucket(50, 49, 1.2), "input-tokens": Bucket(30_000, 10_000, 40.0)},
                                    retry_after_s=20.0))
    assert not pacer.shared
    decision = pacer.pace_delay(20_000)
    assert decision.dimension == "input-tokens"
    assert decision.delay_s == pytest.approx(10_000 / (20_000 / 40.0))  # the deficit's refill, no more


def test_a_reset_that_says_the_bucket_is_full_far_sooner_than_retry_after_allows_is_not_believed() -> None:
    clock = Clock()
    pacer, honest = RatePacer(clock, upper), RatePacer(clock, upper)
    # "full again in 0.6 s" for an empty bucket of 50 (83 a second), while retry-after says 1 s for one
    pacer.refused(RateLimitSnapshot({"requests": Bucket(50, 0, 0.6)}, retry_after_s=1.0))
    assert pacer.pace_delay(10).delay_s == pytest.approx(50.0 * pacing.WIDEN * (1 + pacing.SPREAD))
    pacer.observe(RateLimitSnapshot({"requests": Bucket(50, 10, 0.5)}), uncached_input=10)
    assert pacer.pace_delay(10).delay_s == pytest.approx(40.0 * (1 + pacing.SPREAD))  # still at 1 a second
    # a reset consistent with retry-after (the documented "full again") is taken as stated
    honest.refused(RateLimitSnapshot({"requests": Bucket(50, 0, 60.0)}, retry_after_s=2.0))
    assert honest.pace_delay(10).delay_s == pytest.approx(60.0 * pacing.WIDEN * (1 + pacing.SPREAD))


def test_a_429_before_any_headers_changes_nothing() -> None:
    pacer = RatePacer(Clock(), upper)
    pacer.refused(None)
    assert pacer.pace_delay(10).delay_s == 0


def test_refused_again_and_again_with_no_budget_stated_it_spreads_wider_each_time() -> None:
    pacer = RatePacer(Clock(), upper)
    spreads = []
    for _ in range(8):
        pacer.refused(RateLimitSnapshot(retry_after_s=2.0))  # a server that sends no budget with its 429s
        spreads.append(pacer.retry_after_delay(2.0) - 2.0)
    assert spreads[0] == pytest.approx(0.2)  # the first: a tenth, as always
    assert spreads[1:3] == pytest.approx([6.0, 30.0])  # then retry-after × (4^(n-1) - 1)
    assert spreads[-1] == pacing.BLIND_SPREAD_CAP_S
    pacer.observe(None, uncached_input=100)  # answered: the run of refusals is over
    pacer.refused(RateLimitSnapshot(retry_after_s=2.0))
    assert pacer.retry_after_delay(2.0) == pytest.approx(2.2)
