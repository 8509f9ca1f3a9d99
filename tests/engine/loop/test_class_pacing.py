"""The pacer of sixty kernels on one key, against four ways a server may state its buckets:
bench/bench_class_sim.py's class in virtual time (seconds, the same figures on any machine)."""

from __future__ import annotations

from types import ModuleType

import pytest

from tests.bench_module import load_bench


@pytest.fixture(scope="module")
def sim() -> ModuleType:
    return load_bench("bench_class_sim")


# Per shape, the most it may refuse, and the most the last answer and the slowest student may take
# (x the least the buckets allow, x the median student): the medians of five seeded classes. ``docs``
# and ``bare`` are held to the goals (25%, 1.3 to 1.5, 2); the two readings outside the documentation
# were refused 95% and 96% of the time before the pacer took a 429 as news about the key, and are held
# where they are now (slower: the pacer learns their buckets from refusals).
BOUNDS = {"docs": (0.20, 1.5, 2.0), "bare": (0.25, 1.5, 2.0), "no-requests": (0.27, 1.6, 2.0),
          "next-unit": (0.35, 2.2, 3.0)}


@pytest.mark.parametrize("shape", sorted(BOUNDS))
def test_a_class_of_sixty_is_refused_seldom_and_is_not_slowed(sim: ModuleType, shape: str) -> None:
    share, total_over_minimum, slowest_over_median = sim.medians(sim.ClassSettings(), shape, seeds=5)
    most_refused, most_total, most_slowest = BOUNDS[shape]
    assert share <= most_refused, f"{shape}: {share:.0%} of the requests refused"
    assert total_over_minimum <= most_total, f"{shape}: the last answer came {total_over_minimum:.2f}x the least"
    assert slowest_over_median <= most_slowest, f"{shape}: the slowest took {slowest_over_median:.2f}x the median"


def test_a_class_three_times_over_its_budget_learns_the_crowd_from_its_refusals(sim: ModuleType) -> None:
    # 60 students on 20 requests a minute: 60% of the requests were refused before refusals lengthened
    # the paced waits (the figure an independent limiter measured was 53%)
    share, total_over_minimum, slowest_over_median = sim.medians(sim.ClassSettings(rpm=20), "docs", seeds=5)
    assert share <= 0.38 and total_over_minimum <= 1.3 and slowest_over_median <= 2.0


# One machine's kernels share a budget (engine/loop/shared_budget.py): the documented shape and bare 429s
# are then refused a few percent of the time at the least time the limits allow, even three times over the
# budget or with 200 students (35-74% refused when each kernel paces alone).
ONE_MACHINE: dict[str, tuple[dict[str, int], float, float]] = {
    "default": ({}, 0.05, 1.1), "20 requests/min": ({"rpm": 20}, 0.06, 1.2),
    "200 students": ({"students": 200}, 0.08, 1.2)}


@pytest.mark.parametrize("shape", ["docs", "bare"])
@pytest.mark.parametrize("label", sorted(ONE_MACHINE))
def test_kernels_of_one_machine_sharing_a_budget_are_seldom_refused(sim: ModuleType, shape: str, label: str) -> None:
    overrides, most_refused, most_total = ONE_MACHINE[label]
    settings = sim.ClassSettings(one_machine=True, **overrides)
    share, total_over_minimum, slowest_over_median = sim.medians(settings, shape, seeds=5)
    assert share <= most_refused, f"{label}, {shape}: {share:.0%} of the requests refused"
    assert total_over_minimum <= most_total and slowest_over_median <= 1.6, (total_over_minimum, slowest_over_median)


def test_the_simulated_server_refuses_what_its_buckets_cannot_hold(sim: ModuleType) -> None:
    settings = sim.ClassSettings(rpm=2, input_tpm=100_000, minute_s=60.0)
    server = sim.Server(settings, "docs")
    assert [server.request(0.0)[0] for _ in range(3)] == [True, True, False]
    admitted, snapshot, retry_after = server.request(0.0)
    assert not admitted and retry_after == 30.0  # one request back in 30 s, in whole seconds
    assert snapshot is not None and snapshot.buckets["requests"].remaining == 0
    assert snapshot.buckets["requests"].reset_s == pytest.approx(60.0)  # full again in a minute
    assert server.request(30.0)[0]
    assert sim.Server(settings, "bare").request(0.0)[1] is not None  # answered: headers
