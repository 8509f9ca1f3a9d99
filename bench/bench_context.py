"""Per-request cost of the context manager in a growing session (prints figures and ratios).

A simulated session grows by one user/assistant pair per request: the user message answers the
previous tool call — ``read_file`` of one of 40 files (1-7k characters, so reads repeat and get
de-duplicated) or ``python`` with a fresh output (0.2-3k characters) — or, after a reply with no
tool call, asks something new; the assistant replies and usually calls the next tool. Each request
runs what the loop runs before an API call: ``ContextManager.get_new_context_messages_and_metadata`` and a token estimate of the
request through one ``TokenCounter`` kept for the whole session (cached per message). The
"previous request" usage fed back is that estimate plus the reply, so truncation and file-read
de-duplication fire as they would against the real API.

Reported per history size N (100, 1,000, 10,000 messages): the mean per-request cost over the
requests made while the history grew to N (the last 10% of the way, at least 10 requests), both
context manager alone (with its worst request: truncation and de-duplication passes are
O(kept messages)) and context manager + token estimate, and the ratio 10,000 / 100 (goal ≤ 3x).
Each session runs ``REPEATS`` times and each figure is the minimum over the runs, the one least
disturbed by other work on the machine. Run: ``.venv/bin/python bench/bench_context.py``.
"""

from __future__ import annotations

import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from nbagent.engine.api_facts.tokens import TokenCounter, count_text_tokens  # noqa: E402
from nbagent.engine.context import ContextManager, RequestUsage, get_context_window_info  # noqa: E402
from nbagent.engine.contracts.messages import ContentBlock, Message  # noqa: E402

SIZES = (100, 1_000, 10_000)
WINDOWS = (200_000, 1_000_000)
N_FILES = 40
REPEATS = 2


def _file_bodies(rng: random.Random) -> list[str]:
    words = ["def", "return", "self", "value", "import", "for", "in", "range", "if", "else", "print", "data",
             "frame", "result", "=", "(", ")", ":", "+", "1", "0", "None", "True", "list", "dict"]
    bodies = []
    for i in range(N_FILES):
        lines = [" ".join(rng.choice(words) for _ in range(rng.randint(3, 12))) for _ in range(rng.randint(20, 140))]
        bodies.append(f"# file {i}\n" + "\n".join(lines))
    return bodies


def run_session(window: int, n_messages: int, seed: int = 7) -> tuple[dict[int, list[float]], dict[int, list[float]], dict]:
    """Simulate a session up to ``n_messages``; return per-request seconds keyed by history length."""
    rng = random.Random(seed)
    bodies = _file_bodies(rng)
    cm = ContextManager()
    counter = TokenCounter()
    history: list[Message] = [
        {"role": "user", "content": [{"type": "text", "text": "Analyse the project and fix the failing tests."}]},
        {"role": "assistant", "content": [{"type": "text", "text": "I'll start by reading the files."},
                                          {"type": "tool_use", "id": "t0", "name": "read_file", "input": {"path": "src/f0.py"}}]},
    ]
    deleted_range = None
    prev: RequestUsage | None = None
    cm_times: dict[int, list[float]] = {}
    all_times: dict[int, list[float]] = {}
    stats = {"truncations": 0, "reads_replaced": 0, "max_kept": 0}
    ts = 0
    pending: tuple[str, int] | None = ("t0", 0)
    while len(history) < n_messages:
        # the user message answers the pending tool call (or, without one, asks something)
        user: Message
        if pending is not None:
            tool_id, f = pending
            output = bodies[f] if f >= 0 else f"out[{ts}]: " + "0.25 1.5 -3 " * rng.randint(15, 250)
            user = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tool_id, "content": output}]}
        else:
            user = {"role": "user", "content": [{"type": "text", "text": f"Now look at step {ts}."}]}
        history.append(user)
        ts += 1

        t0 = time.perf_counter()
        result = cm.get_new_context_messages_and_metadata(history, deleted_range, prev, context_window=window)
        t1 = time.perf_counter()
        tokens = counter.count_request(result.truncated_messages)
        t2 = time.perf_counter()
        cm_times.setdefault(len(history), []).append(t1 - t0)
        all_times.setdefault(len(history), []).append(t2 - t0)

        deleted_range = result.deleted_range
        stats["truncations"] += result.updated_deleted_range
        stats["reads_replaced"] += len(result.replaced_reads)
        stats["max_kept"] = max(stats["max_kept"], len(result.truncated_messages))
        # the reply: some text and, most of the time, the next tool call
        reply_text = f"Step {ts}: " + "the file shows the problem is in the loop; " * rng.randint(1, 6)
        content: list[ContentBlock] = [{"type": "text", "text": reply_text}]
        pending = None
        dice = rng.random()
        if dice < 0.45:
            f = rng.randrange(N_FILES)
            pending = (f"t{ts}", f)
            content.append({"type": "tool_use", "id": f"t{ts}", "name": "read_file", "input": {"path": f"src/f{f}.py"}})
        elif dice < 0.8:
            pending = (f"t{ts}", -1)
            content.append({"type": "tool_use", "id": f"t{ts}", "name": "python", "input": {"code": f"step_{ts}(df)"}})
        history.append({"role": "assistant", "content": content})
        prev = RequestUsage(ts, input_tokens=tokens, output_tokens=count_text_tokens(reply_text) + 20)
    return cm_times, all_times, stats


def _near(times: dict[int, list[float]], size: int) -> list[float]:
    lo = size - max(size // 10, 20)
    return [t for n, ts in times.items() if lo < n <= size for t in ts]


def main() -> None:
    start = time.perf_counter()
    for window in WINDOWS:
        runs = [run_session(window, max(SIZES)) for _ in range(REPEATS)]
        stats = runs[0][2]  # the session is deterministic: every run makes the same decisions
        info = get_context_window_info(window)
        print(f"window {window:,} tokens (truncate at {info.max_allowed_size:,.0f}): "
              f"{stats['truncations']} truncations, {stats['reads_replaced']} reads replaced, "
              f"at most {stats['max_kept']} messages sent")
        print(f"  {'messages':>9}  {'context manager (worst)':>26}  {'+ token estimate':>17}")
        cm_row, all_row = {}, {}
        for size in SIZES:
            cm_row[size] = min(statistics.fmean(_near(cm, size)) for cm, _, _ in runs)
            all_row[size] = min(statistics.fmean(_near(both, size)) for _, both, _ in runs)
            worst = min(max(_near(cm, size)) for cm, _, _ in runs)
            print(f"  {size:>9,}  {cm_row[size] * 1e3:>11.3f} ms ({worst * 1e3:>7.3f} ms)"
                  f"  {all_row[size] * 1e3:>14.3f} ms")
        lo, hi = SIZES[0], SIZES[-1]
        print(f"  ratio {hi:,}/{lo}: context manager {cm_row[hi] / cm_row[lo]:.2f}x, "
              f"with token estimate {all_row[hi] / all_row[lo]:.2f}x (goal <= 3x)")
    print(f"total bench time {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
