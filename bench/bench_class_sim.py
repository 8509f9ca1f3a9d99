"""A class of kernels on one key, simulated in virtual time: the pacer alone against server shapes.

``bench_classroom.py`` runs real processes against a real server (minutes, and its figures move with
the machine's load). This runs the same schedule in a few seconds and gives the same answer on any
machine: N students, each one prompt of three requests, every kernel's own :class:`RatePacer`
(the engine's, unchanged, with a virtual clock and a seeded random source) deciding when to send,
a server of continuously refilling token buckets deciding who is refused, and four ways the
server may state its buckets (the columns):

* ``docs``: Anthropic's documentation read literally: every response (429s included) states
  ``requests``, ``input-tokens`` and ``output-tokens`` with the time each is *full* again, as an
  RFC 3339 time to the second; token counts rounded to the nearest thousand; ``retry-after`` in
  whole seconds.
* ``bare``: as ``docs``, but a 429 carries only ``retry-after``.
* ``next-unit``: resets say when the *next unit* is back, not when the bucket is full.
* ``no-requests``: only the token buckets are stated (no ``requests-*`` headers).

Run: ``.venv/bin/python bench/bench_class_sim.py [--seeds 5] [--sweep]``. It prints, per shape, the
share of requests refused (goal <= 25%), the time to the last answer over the least the buckets
allow (goal <= 1.3) and the slowest student's time over the median's (goal <= 2), the medians over
the seeds; ``--sweep`` adds classes the default is not (no latency, a real minute, 30 and 200
students, 20 requests a minute, a busy machine whose requests reach the server up to a second late,
input tokens as the tighter limit). ``--one-machine`` runs the kernels as the processes of one machine
do, sharing a budget (:mod:`nbagent.engine.loop.shared_budget`); without it each paces alone, as on
separate machines.
``tests/engine/loop/test_class_pacing.py`` holds the default class and the one at 20 requests a
minute to their figures.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import functools
import heapq
import math
import random
import statistics
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from nbagent.engine.api_facts.rate_limits import RateLimitSnapshot, parse_rate_limit_headers  # noqa: E402
from nbagent.engine.loop.pacing import RatePacer  # noqa: E402
from nbagent.engine.loop.shared_budget import MemoryStore, SharedBudget  # noqa: E402

SHAPES = ("docs", "bare", "next-unit", "no-requests")
EPOCH = dt.datetime(2026, 12, 3, tzinfo=dt.timezone.utc)


@dataclass
class ClassSettings:
    """The class and its key's limits (per ``minute_s`` seconds: the bench compresses time)."""

    students: int = 60
    requests_per_prompt: int = 3
    rpm: int = 50
    input_tpm: int = 40_000
    output_tpm: int = 8_000
    input_per_request: int = 700
    counted_per_request: int = 1000
    """A request's whole input as the client counts it; the server charges ``input_per_request`` (the
    rest is read from the cache other students wrote)."""
    output_per_request: int = 40
    minute_s: float = 30.0
    latency_s: float = 0.75
    start_spread_s: float = 0.2
    """The students' first requests arrive within this many seconds (processes started together)."""
    lag_s: float = 0.0
    """A busy machine: each request reaches the server up to this many seconds after its kernel sent it."""
    one_machine: bool = False
    """The kernels run on one machine and share a budget (:mod:`nbagent.engine.loop.shared_budget`)."""


class Bucket:
    """A continuously refilling bucket of ``limit`` per minute."""

    def __init__(self, limit: int, minute_s: float) -> None:
        self.limit, self.rate, self.level, self.at = limit, limit / minute_s, float(limit), 0.0

    def refill(self, now: float) -> None:
        self.level, self.at = min(float(self.limit), self.level + (now - self.at) * self.rate), now


@dataclass
class Server:
    """The limiter: admits or refuses at ``now`` and states its buckets in one of :data:`SHAPES`."""

    settings: ClassSettings
    shape: str
    buckets: dict[str, Bucket] = field(default_factory=dict)
    admitted: int = 0
    refused: int = 0

    def __post_init__(self) -> None:
        s = self.settings
        self.buckets = {"requests": Bucket(s.rpm, s.minute_s), "input-tokens": Bucket(s.input_tpm, s.minute_s),
                        "output-tokens": Bucket(s.output_tpm, s.minute_s)}

    def request(self, now: float) -> tuple[bool, RateLimitSnapshot | None, float]:
        """(admitted, what the client parses of the headers, retry-after seconds)."""
        s = self.settings
        for b in self.buckets.values():
            b.refill(now)
        needs = {"requests": 1.0, "input-tokens": float(s.input_per_request), "output-tokens": 1.0}
        wait = max(max(needs[d] - b.level, 0.0) / b.rate for d, b in self.buckets.items())
        if wait > 0:
            self.refused += 1
            retry_after = max(math.ceil(wait * 60.0 / s.minute_s), 1) * s.minute_s / 60.0
            return False, (None if self.shape == "bare" else self._headers(now, retry_after)), retry_after
        self.admitted += 1
        self.buckets["requests"].level -= 1
        self.buckets["input-tokens"].level -= s.input_per_request
        self.buckets["output-tokens"].level -= s.output_per_request
        return True, self._headers(now, None), 0.0

    def _headers(self, now: float, retry_after: float | None) -> RateLimitSnapshot | None:
        wall = EPOCH + dt.timedelta(seconds=now)
        headers: dict[str, str] = {}
        for name, b in self.buckets.items():
            if name == "requests" and self.shape == "no-requests":
                continue
            remaining = max(int(b.level), 0)
            if name != "requests":
                remaining = int(round(remaining, -3))
            if self.shape == "next-unit":
                until = max(1.0 - (b.level - int(b.level)), 0.0) / b.rate if b.level < b.limit else 0.0
            else:
                until = max(b.limit - b.level, 0.0) / b.rate
            stamp = (wall + dt.timedelta(seconds=until)).replace(microsecond=0)
            prefix = f"anthropic-ratelimit-{name}-"
            headers |= {prefix + "limit": str(b.limit), prefix + "remaining": str(remaining),
                        prefix + "reset": stamp.isoformat().replace("+00:00", "Z")}
        return parse_rate_limit_headers(headers, wall, retry_after)


@dataclass
class Student:
    pacer: RatePacer
    done: int = 0
    age: int = 0
    finished_at: float = 0.0


class ClassRun:
    """One class in virtual time: a queue of (when, order, step) and every student's pacer."""

    def __init__(self, settings: ClassSettings, shape: str, seed: int) -> None:
        self.settings, self.rng, self.now = settings, random.Random(seed), 0.0
        self.server = Server(settings, shape)
        machine = SharedBudget(MemoryStore()) if settings.one_machine else None
        self.students = [Student(RatePacer(clock=lambda: self.now, uniform=self.rng.uniform, budget=machine))
                         for _ in range(settings.students)]
        self.events: list[tuple[float, int, Callable[[], None]]] = []
        self.order = 0

    def at(self, when: float, step: Callable[[], None]) -> None:
        self.order += 1
        heapq.heappush(self.events, (when, self.order, step))

    def attempt(self, i: int) -> None:
        """The engine's step before sending: the pacer's wait, if any, then the request."""
        st = self.students[i]
        decision = st.pacer.pace_delay(self.settings.counted_per_request, age=st.age)
        delay = decision.delay_s
        if decision.again:  # another kernel's first answer is awaited: ask again after the wait
            self.at(self.now + delay, functools.partial(self.attempt, i))
        elif delay > 0:
            st.age += 1
            self.at(self.now + delay, functools.partial(self.send, i))
        else:
            self.send(i)

    def send(self, i: int) -> None:
        self.students[i].pacer.sent()
        if self.settings.lag_s:
            self.at(self.now + self.rng.uniform(0.0, self.settings.lag_s), functools.partial(self.arrive, i))
        else:
            self.arrive(i)

    def arrive(self, i: int) -> None:
        pacer = self.students[i].pacer
        ok, snapshot, retry_after = self.server.request(self.now)
        if ok:
            self.at(self.now + self.settings.latency_s, functools.partial(self.answered, i, snapshot))
        else:
            pacer.refused(snapshot)
            self.at(self.now + pacer.retry_after_delay(retry_after), functools.partial(self.attempt, i))

    def answered(self, i: int, snapshot: RateLimitSnapshot | None) -> None:
        st = self.students[i]
        st.pacer.observe(snapshot, self.settings.input_per_request)
        st.done += 1
        if st.done == self.settings.requests_per_prompt:
            st.finished_at = self.now
        else:
            st.age = 0
            self.attempt(i)

    def run(self) -> tuple[float, float, float]:
        """(share of requests refused, time to the last answer / the least the buckets allow,
        the slowest student's time / the median student's)."""
        s = self.settings
        for i in range(s.students):
            self.at(self.rng.uniform(0.0, s.start_spread_s), functools.partial(self.attempt, i))
        while self.events:
            self.now, _, step = heapq.heappop(self.events)
            step()
        total = s.students * s.requests_per_prompt
        minimum = max((total - s.rpm) / s.rpm, (total * s.input_per_request - s.input_tpm) / s.input_tpm, 0.0)
        minimum = minimum * s.minute_s + s.latency_s
        finished = sorted(st.finished_at for st in self.students)
        refused = self.server.refused / (self.server.refused + self.server.admitted)
        return refused, finished[-1] / minimum, finished[-1] / statistics.median(finished)


def run_class(settings: ClassSettings, shape: str, seed: int) -> tuple[float, float, float]:
    """One class: see :meth:`ClassRun.run`."""
    return ClassRun(settings, shape, seed).run()


SWEEP: dict[str, ClassSettings] = {
    "no latency": ClassSettings(latency_s=0.0),
    "a real minute": ClassSettings(minute_s=60.0, latency_s=1.5),
    "30 students": ClassSettings(students=30),
    "200 students": ClassSettings(students=200),
    "20 requests/min": ClassSettings(rpm=20),
    "a busy machine": ClassSettings(lag_s=1.0),
    "tokens tighter": ClassSettings(rpm=500, input_tpm=20_000),
}


def medians(settings: ClassSettings, shape: str, seeds: int) -> tuple[float, float, float]:
    """The medians of :meth:`ClassRun.run`'s figures over ``seeds`` classes."""
    runs = [run_class(settings, shape, seed) for seed in range(seeds)]
    return (statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs),
            statistics.median(r[2] for r in runs))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--sweep", action="store_true", help="also the classes of SWEEP")
    parser.add_argument("--one-machine", action="store_true", help="the kernels share one machine's budget")
    args = parser.parse_args(argv)
    default = ClassSettings(one_machine=args.one_machine)
    print(f"simulated class: {default.students} students x {default.requests_per_prompt} requests, "
          f"{default.rpm} requests / {default.input_tpm:,} input tokens per {default.minute_s:g} s, "
          f"median of {args.seeds} seeds; each cell: 429 share, total / minimum, slowest / median")
    print(f"  {'class':<16}" + "".join(f"{shape:>24}" for shape in SHAPES))
    sweep = {label: dataclasses.replace(s, one_machine=args.one_machine) for label, s in SWEEP.items()}
    for label, settings in {"default": default, **(sweep if args.sweep else {})}.items():
        cells = (medians(settings, shape, args.seeds) for shape in SHAPES)
        print(f"  {label:<16}" + "".join(f"{share:>10.0%}  x{ratio:4.2f}  x{tail:4.2f}" for share, ratio, tail in cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
