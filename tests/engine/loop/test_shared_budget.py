"""One machine's kernels on one key: the budget they book their sends in, through their pacers."""

from __future__ import annotations

from typing import Any

import pytest

from nbagent.engine.api_facts.rate_limits import Bucket, RateLimitSnapshot
from nbagent.engine.loop.pacing import RatePacer
from nbagent.engine.loop.shared_budget import FIRST_ANSWER_WAIT_S, MemoryStore, SharedBudget


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def headers(remaining: int, limit: int = 10, reset_s: float | None = None, **more: Bucket) -> RateLimitSnapshot:
    """A ``requests`` bucket (by default its reset is when it would be full at one a second)."""
    return RateLimitSnapshot({"requests": Bucket(limit, remaining, limit - remaining if reset_s is None else reset_s),
                              **more})


def seeded(level: float, limit: int = 10, rate: float = 1.0, dim: str = "requests") -> SharedBudget:
    """A budget that already knows a bucket (its rate measured long: no margin is kept on it)."""
    store = MemoryStore()
    store.document = {"buckets": {dim: {"limit": limit, "rate": rate, "level": level, "at": 100.0,
                                        "measured_s": 1e9, "cap": 0}}, "sends": [], "answered": 100.0}
    return SharedBudget(store)


def kernels(budget: SharedBudget, n: int) -> tuple[Clock, list[RatePacer]]:
    clock = Clock()
    return clock, [RatePacer(clock, None, budget=budget) for _ in range(n)]


def send(pacer: RatePacer, clock: Clock) -> float:
    """The engine's steps before a request: the pacer's wait, then the send (the clock moves on)."""
    delay = pacer.pace_delay(100).delay_s
    clock.now += delay
    pacer.sent()
    return delay


def book(pacer: RatePacer, estimate: int = 100) -> float:
    """A send booked and sent at once (its wait, if any, left to the slot the budget gave it)."""
    delay = pacer.pace_delay(estimate).delay_s
    pacer.sent()
    return delay


def test_kernels_of_one_machine_queue_behind_each_other() -> None:
    clock, pacers = kernels(seeded(level=3), 5)
    first = [p.pace_delay(100).delay_s for p in pacers]
    assert first == pytest.approx([0.0, 0.0, 0.0, 1.0, 2.0])  # three fit now, then one a second: no two share a slot


def test_the_first_request_is_a_probe_the_others_wait_for_its_answer() -> None:
    clock, (a, b, c) = kernels(SharedBudget(MemoryStore()), 3)
    assert send(a, clock) == 0.0  # nothing known: a asks first
    waiting = b.pace_delay(100)
    assert waiting.again and 0 < waiting.delay_s <= 0.1
    a.observe(headers(remaining=9), uncached_input=100)
    assert not b.pace_delay(100).again and not c.pace_delay(100).again  # the budget is known: they book


def test_an_answer_without_headers_ends_the_probing_and_a_lost_probe_is_not_waited_for_long() -> None:
    clock, (a, b, c) = kernels(SharedBudget(MemoryStore()), 3)
    send(a, clock)
    a.observe(None, uncached_input=100)  # a server that states no budget: nobody waits again
    assert not b.pace_delay(100).again and not c.pace_delay(100).again
    clock, (a, b) = kernels(SharedBudget(MemoryStore()), 2)
    send(a, clock)  # and never answers (its kernel died)
    clock.now += FIRST_ANSWER_WAIT_S + 0.1
    assert not b.pace_delay(100).again  # b becomes the probe


def test_the_answer_of_an_earlier_request_does_not_count_what_was_booked_after_it() -> None:
    clock, (a, b) = kernels(seeded(level=10), 2)
    send(a, clock)
    clock.now += 0.1
    send(b, clock)  # booked after a's request: a's headers cannot include it yet
    a.observe(headers(remaining=2), uncached_input=100)
    assert book(b) == 0.0  # 2 - b's send: 1 left, this one fits
    assert book(b) == pytest.approx(1.0, rel=0.05)  # the next one does not


def test_siblings_on_the_machine_are_not_taken_for_another_user_of_the_key() -> None:
    clock, pacers = kernels(seeded(level=10), 5)
    for p in pacers:
        send(p, clock)
    pacers[0].observe(headers(remaining=5), uncached_input=100)  # five used: all this machine's
    assert not pacers[0].shared
    pacers[1].observe(headers(remaining=1), uncached_input=100)  # nine used, five booked here: others
    assert pacers[1].shared


def test_another_machine_on_the_key_shows_as_a_lower_remaining_and_lengthens_the_queue() -> None:
    for others in (0, 9):
        clock, (a, b) = kernels(seeded(level=10), 2)
        send(a, clock)
        a.observe(headers(remaining=9 - others), uncached_input=100)
        assert b.pace_delay(100).delay_s == pytest.approx(1.0 if others else 0.0, rel=0.05)  # grown by the others' use


def test_a_refusal_without_headers_empties_the_budget() -> None:
    clock, (a, b) = kernels(seeded(level=10), 2)
    send(a, clock)
    a.refused(None)  # a 429 with retry-after only
    assert b.pace_delay(100).delay_s == pytest.approx(1.0)  # empty now: the next unit, one second away


def test_a_refused_send_is_taken_off_the_bookings() -> None:
    budget = seeded(level=2)
    clock, (a, b) = kernels(budget, 2)
    send(a, clock)
    clock.now += 0.1
    send(b, clock)
    a.refused(headers(remaining=0, limit=10, reset_s=10.0))  # a's send took nothing; b's booking is still owed
    assert [s[0] for s in budget.store.document["sends"]] == pytest.approx([100.1])  # type: ignore[attr-defined,index]
    assert b.pace_delay(100).delay_s == pytest.approx(2.0, rel=0.05)  # b's send is owed first


def test_input_tokens_queue_sends_as_requests_do() -> None:
    clock, (a, b) = kernels(seeded(level=500, limit=1000, rate=10.0, dim="input-tokens"), 2)
    assert a.pace_delay(300).delay_s == 0.0  # 500 - 300
    assert b.pace_delay(300).delay_s == pytest.approx(10.0)  # 200 left, b needs 300: 100 more at 10 a second


def test_the_rate_is_learnt_from_resets_stated_to_the_second_with_a_margin_while_measured_briefly() -> None:
    budget = SharedBudget(MemoryStore())
    clock, (a, b) = kernels(budget, 2)
    send(a, clock)
    a.observe(headers(remaining=7, reset_s=2.5), uncached_input=100)  # 3 used, full in 2.5 to 3.5 s
    bucket = budget.store.document["buckets"]["requests"]  # type: ignore[attr-defined,index]
    assert bucket["rate"] == pytest.approx(1.0) and bucket["measured_s"] == pytest.approx(3.0)
    delays = [book(b) for _ in range(8)]
    assert delays[7] == pytest.approx(1 / 0.75)  # the 8th waits for one unit at 3/4 of the rate: 3 s measured


def test_a_reset_that_contradicts_retry_after_is_not_believed_about_the_rate() -> None:
    budget = seeded(level=10)
    clock, (a, b) = kernels(budget, 2)
    send(a, clock)
    a.refused(RateLimitSnapshot({"requests": Bucket(10, 0, 0.5)}, retry_after_s=10.0))  # "full in 0.5 s"
    bucket = budget.store.document["buckets"]["requests"]  # type: ignore[attr-defined,index]
    assert bucket["cap"] == pytest.approx(0.1)  # one request per retry-after's 10 s
    assert b.pace_delay(100).delay_s == pytest.approx(10.0, rel=0.02)


def test_a_state_from_another_clock_or_malformed_is_dropped() -> None:
    store = MemoryStore()
    budget = SharedBudget(store)
    store.document = {"buckets": {"requests": {"limit": 10, "rate": 1.0, "level": -500.0, "at": 1e12}},
                      "sends": [[1e12, 5.0], "x", [1, 2, 3]]}
    assert budget.reserve(100.0, 100)["delay_s"] == 0.0  # a time after now: not this clock's
    store.document = {"buckets": {"requests": {"limit": "10"}}, "sends": None}
    assert budget.reserve(100.0, 100)["delay_s"] == 0.0
    store.document = ["not", "a", "budget"]
    assert budget.reserve(100.0, 100)["delay_s"] == 0.0




def test_a_request_is_booked_at_the_share_of_its_count_the_server_charged_the_machine() -> None:
    budget = seeded(level=10_000, limit=10_000, rate=100.0, dim="input-tokens")
    clock, (a, b) = kernels(budget, 2)
    a.pace_delay(1000)  # its first request: its whole input counts 1,000 tokens
    a.sent()
    a.observe(None, uncached_input=300)  # the server charged 300: the rest was read from the cache
    b.pace_delay(1000)
    sends = budget.store.document["sends"]  # type: ignore[attr-defined,index]
    assert [s[1] for s in sends] == pytest.approx([300.0, 1000 * (0.9 + 0.1 * 0.3)])  # a's cost; b's: the share learnt


def test_a_long_answer_s_headers_count_the_refill_during_its_stream() -> None:
    clock, (a,) = kernels(seeded(level=30_000, limit=30_000, rate=500.0, dim="input-tokens"), 1)
    send(a, clock)
    tokens = Bucket(30_000, 10_000, 40.0)  # at the head: 10,000 left, 500 a second
    a.observe(RateLimitSnapshot({"input-tokens": tokens}, age_s=20.0), uncached_input=100)  # a 20 s stream
    assert a.pace_delay(20_000).delay_s < 1.0  # 10,000 + 20 s x 500 = 20,000 are there now (20 s before)


def test_a_failure_without_headers_and_a_stop_before_sending_give_the_booking_back() -> None:
    budget = seeded(level=1)
    clock, (a,) = kernels(budget, 1)
    send(a, clock)
    a.failed(None)  # a 529 or a dropped connection: it most likely took nothing
    assert a.pace_delay(100).delay_s == 0.0  # booked again, and not sent: the user pressed Stop
    assert a.pace_delay(100).delay_s == 0.0  # the stopped one was given back
    assert len(budget.store.document["sends"]) == 1  # type: ignore[attr-defined,index]


def test_a_probe_stopped_before_its_answer_is_not_waited_for() -> None:
    clock, (a, b) = kernels(SharedBudget(MemoryStore()), 2)
    assert not a.pace_delay(100).again  # a is the probe, and its user stops it before it is sent
    assert not a.pace_delay(100).again and b.pace_delay(100).again  # a re-run probes again; b waits for it


def test_the_headers_at_the_head_of_the_probe_s_answer_release_the_others() -> None:
    clock, (a, b) = kernels(SharedBudget(MemoryStore()), 2)
    send(a, clock)
    assert b.pace_delay(100).again
    a.at_head(headers(remaining=9))  # its stream has only begun
    assert not b.pace_delay(100).again


def test_a_cap_from_a_429_is_forgotten_when_the_headers_stop_contradicting_it() -> None:
    budget = seeded(level=10)
    clock, (a,) = kernels(budget, 1)
    send(a, clock)
    a.refused(RateLimitSnapshot({"requests": Bucket(10, 0, 0.5)}, retry_after_s=10.0))
    bucket = lambda: budget.store.document["buckets"]["requests"]  # type: ignore[attr-defined,index]  # noqa: E731
    assert bucket()["cap"] == pytest.approx(0.1)
    clock.now += 1300.0
    send(a, clock)
    a.observe(headers(remaining=9), uncached_input=100)
    assert bucket()["cap"] == 0.0


@pytest.mark.parametrize("text", ['{"buckets": {"requests": {"limit": 1e999, "rate": 1, "level": 0, "at": 0}}}',
                                  '{"buckets": {"requests": {"limit": 1' + "0" * 400 + ', "rate": 1, "level": 0, "at": 0}}}',
                                  '{"sends": [[1e308, 1e308]], "charged_share": 1e-300, "probe": -1e999}',
                                  "[" * 100_000 + "]" * 100_000])
@pytest.mark.usefixtures("collections_keep_stack_left")
def test_a_file_of_any_content_reads_as_empty_and_never_fails_a_request(tmp_path: Any, text: str) -> None:
    from nbagent.engine.disk.shared_file import SharedFile

    path = tmp_path / "budget.json"
    path.write_text(text)
    clock, (a,) = kernels(SharedBudget(SharedFile(path)), 1)
    assert a.pace_delay(100).delay_s == 0.0 and a.budget is not None
