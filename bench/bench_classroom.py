"""A classroom on one key: N agent processes, one shared rate limit, on loopback.

Each student is its own process (a kernel's agent with its own task folder) running one prompt
that takes three requests (two tool calls, then the answer) against one simulated Messages API in
its shared rate limit mode (default 50 requests and 40,000 uncached input tokens per minute,
answered 429 with ``retry-after`` over them, ``anthropic-ratelimit-*`` headers on every response).
Time is compressed (``--time-factor``: the minute lasts 60/f s, and so do the server's latencies)
so that the class runs in a minute or two. All processes start, load nbagent and build their
agent, then begin together.

Printed, measured in one run:

* finished: students whose prompt ended with the answer, no failure shown (goal: all);
* total ÷ minimum: the time from the start to the last answer ÷ the least the buckets allow for
  the requests and uncached input tokens the server admitted, plus one request's latency (goal ≤ 1.3);
* slowest ÷ median: the slowest student's time to the answer ÷ the median one's (goal ≤ 2);
* 429 share: requests the server refused ÷ all it received (goal ≤ 25%).

Two server shapes (``--server``): ``project``, the simulated API's own shared rate limit; ``docs``,
a limiter written here from Anthropic's rate-limit documentation alone (:class:`DocsLimiter`):
continuously refilling token buckets for requests, input and output tokens, input tokens counted
as the docs count them (uncached input and cache writes, not cache reads), ``*-tokens-remaining``
rounded to the nearest thousand, resets as RFC 3339 times (when the bucket is full again), the
``tokens`` headers those of the most restrictive token bucket, and ``retry-after`` in whole seconds.
``docs-bare`` is the same limiter whose 429s carry ``retry-after`` and no ``anthropic-ratelimit-*``
headers (the reading that came nearest the independent limiter's figure: 87% refused before the
pacer took a headerless 429 as news, 38% after).

The students share one machine's rate limit budget (:mod:`nbagent.engine.loop.shared_budget`, a
pacing folder new for each run); ``--separate-machines`` gives each its own, as students on their own
laptops (each kernel then paces alone).

Run: ``.venv/bin/python bench/bench_classroom.py [--students 60] [--time-factor 3] [--server docs]``;
``--agent-src /path/to/other/checkout`` runs the students on another version (the baseline), the
server always from this one.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Sequence, TypedDict

HERE = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(HERE))

PROMPT = "List the files here twice, then say how many there are."
OUTPUT_TPM = 8_000
"""The docs shape's output tokens per minute (tier 1's), far above what this class's replies use."""
LATENCY_S = 1.5
"""A reply's first token after this many (uncompressed) seconds: about what a short reply takes."""


def classroom_reply(body: dict[str, Any]) -> Any:
    """Two ``list_files`` calls, then the answer: three requests per prompt."""
    from nbagent.providers.simulated import text_reply, tool_reply

    calls = sum(1 for m in body.get("messages", []) if m.get("role") == "assistant")
    if calls < 2:
        return tool_reply("list_files", {"path": "."}, text="Listing the files.")
    return text_reply("[simulated] There are no files here yet.")


# -- one student (a worker process) ---------------------------------------------------------------


class StudentResult(TypedDict, total=False):
    """The JSON line a student prints when its prompt ends."""

    waits: float
    """Seconds the records say the student's requests waited for the rate limit (measured)."""
    announced_waits: float
    """The sum of the waits' events' ``delay_s``: an upper bound ("waited up to"), not the wait."""
    retry_waits: float
    failed: int
    reason: str | None
    elapsed: float
    finished_at: float


def tally(events: Sequence[Any], records: Sequence[Any]) -> StudentResult:
    """A student's figures from its run's events and request records. ``waits`` is what the records
    measured (the turn table's ``rate-limit wait s``): a wait's event announces what it may last (a
    wait for another kernel's first answer its 5 s cap, ended when that answer books the send), and
    their sum, once the median wait, is kept as ``announced_waits``."""
    from nbagent.engine.contracts.events import ApiRequestFailed, Done, RateLimitWait, RetryScheduled

    result: StudentResult = {"waits": sum(r.rate_limit_wait_s for r in records), "announced_waits": 0.0,
                             "retry_waits": 0.0, "failed": 0, "reason": None}
    for event in events:
        if isinstance(event, RateLimitWait):
            result["announced_waits"] += event.delay_s
        elif isinstance(event, RetryScheduled):
            result["retry_waits"] += event.delay_s
        elif isinstance(event, ApiRequestFailed):
            result["failed"] += 1
        elif isinstance(event, Done):
            result["reason"] = event.reason
    return result


def student(base_url: str, task_dir: str) -> int:
    """Build the agent, say ``ready``, wait for ``go`` on stdin, run the prompt, print one JSON line."""
    sys.path.insert(0, os.environ.get("NBAGENT_SRC", str(HERE)))
    import asyncio

    from nbagent import Agent
    from nbagent.providers.anthropic import anthropic_provider, simulated_provider
    from nbagent.providers.simulated import SimulatedAPI

    os.chdir(task_dir)
    # A warm-up prompt in-process (lazy imports, the tokenizer, the SDK's first client), so the
    # class measures requests and waits, not each process's first-use costs on two shared cores.
    Agent(provider=simulated_provider(SimulatedAPI(classroom_reply)), cwd=task_dir).run_sync(PROMPT)
    agent = Agent(provider=anthropic_provider("sk-classroom-bench", base_url=base_url), task_dir=Path(task_dir) / "task",
                  cwd=task_dir)
    print("ready", flush=True)
    sys.stdin.readline()
    started = time.monotonic()
    async def go() -> list[Any]:
        return [event async for event in agent.run(PROMPT)]

    result = tally(asyncio.run(go()), agent.records)
    result["elapsed"] = time.monotonic() - started
    result["finished_at"] = time.monotonic()  # CLOCK_MONOTONIC: one clock for every process here
    print(json.dumps(result), flush=True)
    return 0


# -- the documented server shape -----------------------------------------------------------------


class _DocsBucket:
    """A bucket of ``limit`` per minute that refills continuously (level may go below 0 for output)."""

    def __init__(self, limit: int, minute_s: float, now: float) -> None:
        self.limit, self.rate = limit, limit / minute_s
        self.level, self.at = float(limit), now

    def refill(self, now: float) -> None:
        self.level, self.at = min(float(self.limit), self.level + (now - self.at) * self.rate), now


class DocsLimiter:
    """The ``docs`` shape (see the module docstring), with the interface the simulated API calls
    (``admit``, ``charge_output``, ``headers``) and the counters the bench reads."""

    def __init__(self, rpm: int, input_tpm: int, output_tpm: int, factor: float, clock: Any,
                 bare_refusals: bool = False) -> None:
        import datetime as dt

        self.bare_refusals, self._refusing = bare_refusals, False
        self.clock, self.factor, self._dt = clock, factor, dt
        minute = 60.0 / factor
        now = clock()
        self.buckets = {"requests": _DocsBucket(rpm, minute, now), "input-tokens": _DocsBucket(input_tpm, minute, now),
                        "output-tokens": _DocsBucket(output_tpm, minute, now)}
        self.admitted = self.refused = self.admitted_input_tokens = 0

    def _refill(self) -> float:
        now = self.clock()
        for b in self.buckets.values():
            b.refill(now)
        return now

    def admit(self, uncounted_input: int) -> None:
        """``uncounted_input``: input tokens minus cache reads (what the docs count for ITPM)."""
        from nbagent.providers.simulated.validation import ApiError

        self._refill()
        needs = {"requests": 1.0, "input-tokens": float(uncounted_input), "output-tokens": 1.0}
        waits = {d: max(min(needs[d], b.limit) - b.level, 0.0) / b.rate for d, b in self.buckets.items()}
        dim, wait = max(waits.items(), key=lambda item: item[1])
        if wait > 0:
            self.refused += 1
            self._refusing = self.bare_refusals
            whole = max(math.ceil(wait * self.factor), 1) / self.factor  # whole seconds, in compressed time
            raise ApiError(429, "rate_limit_error", f"This request would exceed your organization's rate limit "
                           f"of {self.buckets[dim].limit:,} {dim.replace('-', ' ')} per minute. [docs-shaped]", whole)
        self.admitted += 1
        self.admitted_input_tokens += uncounted_input
        self.buckets["requests"].level -= 1
        self.buckets["input-tokens"].level -= min(float(uncounted_input), self.buckets["input-tokens"].limit)

    def charge_output(self, output_tokens: int) -> None:
        self._refill()
        self.buckets["output-tokens"].level -= output_tokens

    def headers(self) -> list[tuple[str, str]]:
        if self._refusing:  # a 429 of the ``docs-bare`` shape: retry-after only
            self._refusing = False
            return []
        self._refill()
        wall = self._dt.datetime.now(self._dt.timezone.utc)
        out: list[tuple[str, str]] = []

        def bucket_headers(name: str, b: _DocsBucket, thousands: bool) -> list[tuple[str, str]]:
            remaining = max(int(b.level), 0)
            if thousands:
                remaining = int(round(remaining, -3))  # "rounded to the nearest thousand"
            reset = wall + self._dt.timedelta(seconds=max(b.limit - b.level, 0.0) / b.rate)
            stamp = reset.isoformat(timespec="seconds").replace("+00:00", "Z")
            prefix = f"anthropic-ratelimit-{name}-"
            return [(prefix + "limit", str(b.limit)), (prefix + "remaining", str(remaining)), (prefix + "reset", stamp)]

        for name, b in self.buckets.items():
            out += bucket_headers(name, b, name != "requests")
        tightest = min(("input-tokens", "output-tokens"), key=lambda n: self.buckets[n].level / self.buckets[n].limit)
        out += bucket_headers("tokens", self.buckets[tightest], True)
        return out


# -- the class ------------------------------------------------------------------------------------


def run_class(students: int, rpm: int, input_tpm: int, factor: float, agent_src: str | None,
              quiet: bool = False, server: str = "project", separate: bool = False) -> dict[str, Any]:
    """Serve the API, start ``students`` processes, start them together, and measure. The students
    share a machine's rate limit budget (a pacing folder new for the run), unless ``separate``: each
    its own folder, as students on their own laptops."""
    from nbagent.engine.disk.shared_file import PACING_DIR_ENV
    from nbagent.providers.simulated import LoopbackServer, RateLimitSettings, SimulatedAPI

    api = SimulatedAPI(classroom_reply, rate_limits=RateLimitSettings(rpm, input_tpm, None, factor),
                       first_token_latency=LATENCY_S / factor)
    if server in ("docs", "docs-bare"):
        api.rate_limits = DocsLimiter(rpm, input_tpm, OUTPUT_TPM, factor, lambda: api.clock(),
                                      bare_refusals=server == "docs-bare")  # type: ignore[assignment]
    env = {**os.environ, "NBAGENT_SRC": agent_src or str(HERE), "ANTHROPIC_API_KEY": ""}
    with tempfile.TemporaryDirectory(prefix="nbagent-class-") as root, LoopbackServer(api) as loopback:
        procs = []
        for i in range(students):
            folder = Path(root) / f"student-{i:03d}"
            folder.mkdir()
            pacing = {PACING_DIR_ENV: str(Path(root) / ("pacing-" + (f"{i:03d}" if separate else "machine")))}
            procs.append(subprocess.Popen([sys.executable, __file__, "--student", loopback.base_url, str(folder)],
                                          stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                          env={**env, **pacing}))
        for p in procs:  # every agent built before the class starts
            assert p.stdout is not None and p.stdout.readline().strip() == "ready", "a student failed to start"
        assert api.rate_limits is not None
        buckets = api.rate_limits.buckets
        for bucket in buckets.values():  # a full minute's budget at the start, as for a class after a pause
            bucket.level, bucket.at = float(bucket.limit), api.clock()
        started = time.monotonic()
        for p in procs:
            assert p.stdin is not None
            p.stdin.write("go\n")
            p.stdin.flush()
        results: list[StudentResult] = []
        for p in procs:
            out, _ = p.communicate(timeout=1800)
            lines = [line for line in out.splitlines() if line.startswith("{")]
            crashed: StudentResult = {"reason": "crashed", "elapsed": 0.0, "failed": 1}
            results.append(json.loads(lines[-1]) if lines else crashed)
        # The last answer, not the last process exit (an interpreter's shutdown is no student's wait).
        total = max(r.get("finished_at", time.monotonic()) for r in results) - started
        limits = api.rate_limits
        window = 60.0 / factor
        minimum = max((limits.admitted - rpm) / rpm * window, (limits.admitted_input_tokens - input_tpm) / input_tpm * window,
                      0.0) + LATENCY_S / factor
        received = limits.admitted + limits.refused
    finished = [r for r in results if r.get("reason") == "end_turn" and not r.get("failed")]
    elapsed = sorted(r.get("elapsed", 0.0) for r in results)
    return {
        "students": students, "finished": len(finished), "total_s": total, "minimum_s": minimum,
        "total_over_min": total / minimum if minimum else float("nan"),
        "slowest_over_median": elapsed[-1] / statistics.median(elapsed),
        "share_429": limits.refused / received if received else 0.0, "requests": received,
        "refused": limits.refused, "admitted_input_tokens": limits.admitted_input_tokens,
        "median_wait_s": statistics.median(r.get("waits", 0.0) + r.get("retry_waits", 0.0) for r in results),
        "median_announced_wait_s": statistics.median(r.get("announced_waits", 0.0) + r.get("retry_waits", 0.0)
                                                     for r in results),
        "reasons": sorted({str(r.get("reason")) for r in results}),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=60)
    parser.add_argument("--rpm", type=int, default=50)
    parser.add_argument("--input-tpm", type=int, default=40_000)
    parser.add_argument("--time-factor", type=float, default=2.0)
    parser.add_argument("--agent-src", default=None, help="checkout the students run (default: this one)")
    parser.add_argument("--server", choices=("project", "docs", "docs-bare"), default="project",
                        help="the rate limiter: the simulated API's own, the one written from the docs, "
                             "or that one with bare 429s")
    parser.add_argument("--separate-machines", action="store_true",
                        help="each student paces alone, as on its own machine (default: one machine's shared budget)")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    parser.add_argument("--student", nargs=2, metavar=("BASE_URL", "FOLDER"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.student:
        return student(*args.student)
    r = run_class(args.students, args.rpm, args.input_tpm, args.time_factor, args.agent_src, server=args.server,
                  separate=args.separate_machines)
    if args.json:
        print(json.dumps(r))
        return 0
    print(f"classroom: {r['students']} students x 3 requests, {args.rpm} requests and {args.input_tpm:,} input "
          f"tokens per minute, time x{args.time_factor:g}, server {args.server}, "
          f"{'separate machines' if args.separate_machines else 'one machine'}"
          + (f", students from {args.agent_src}" if args.agent_src else ""))
    print(f"  finished            {r['finished']}/{r['students']}   (goal: all; outcomes {', '.join(r['reasons'])})")
    print(f"  total / minimum     {r['total_over_min']:.2f}   ({r['total_s']:.1f} s / {r['minimum_s']:.1f} s; goal <= 1.3)")
    print(f"  slowest / median    {r['slowest_over_median']:.2f}   (time to the answer; goal <= 2)")
    print(f"  429 share           {r['share_429']:.0%}   ({r['refused']} of {r['requests']} requests; goal <= 25%)")
    print(f"  median wait         {r['median_wait_s']:.1f} s   (rate limit waits and retry waits per student)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
