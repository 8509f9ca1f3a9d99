"""Context policies compared on one synthetic 300-request data-analysis session: dollars, cache-hit
share and a recall probe, with the documented prompt-cache rules and Sonnet 5.5 prices.

The session: a task, then 300 requests; 40 of them return a ~5k-token tool result (a data load),
the others a short one (~150 tokens), each assistant turn ~120 tokens; facts are planted in the
first 10 large results (``FACT-k``). Window 200k (Cline's max allowed 160k). Per request the
policy decides what is sent (through nbagent's engine: ``ContextManager`` for Cline truncation,
``mask_old_results`` for masking, ``compacted`` for summary compaction with a 2k-token summary that
keeps no planted fact), then the cache is charged as the API documents it: the longest prefix
equal to the previous request's is read ($0.10/M), the rest written ($2.50/M), output $10/M; the
summary request itself costs its input at $2/M plus output. Run: ``python bench/bench_context_policies.py``.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

sys.path.insert(0, os.environ.get("NBAGENT_SRC", str(Path(__file__).resolve().parents[1])))

from nbagent.engine.api_facts.tokens import TokenCounter  # noqa: E402
from nbagent.engine.context import ContextManager, RequestUsage  # noqa: E402
from nbagent.engine.context.mask import mask_old_results  # noqa: E402
from nbagent.engine.contracts.context_policy import ContextPolicy  # noqa: E402
from nbagent.engine.state.compactions import compacted  # noqa: E402

WINDOW, REQUESTS, BIG, N_BIG, OUT = 200_000, 300, 5_000, 40, 120
PRICE_IN, PRICE_WRITE, PRICE_READ, PRICE_OUT = 2e-6, 2.5e-6, 0.1e-6, 10e-6
SUMMARY_TOKENS = 2_000
COUNTER = TokenCounter()


def words(n: int, seed: int) -> str:
    return " ".join(f"w{(seed * 7 + i) % 997}" for i in range(n))  # ~1 token per word


def session() -> list[dict]:
    """The full history of the 300 requests (requests at each trailing user message)."""
    big_at = {round(i * REQUESTS / N_BIG) for i in range(N_BIG)}
    h: list[dict] = [{"role": "user", "content": [{"type": "text", "text": "Analyse the sales data."}]}]
    for r in range(REQUESTS):
        h.append({"role": "assistant", "content": [{"type": "text", "text": words(OUT, r)},
                 {"type": "tool_use", "id": f"t{r}", "name": "python", "input": {"code": f"step({r})"}}]})
        k = sorted(big_at).index(r) if r in big_at else None
        body = (f"FACT-{k} " if k is not None and k < 10 else "") + words(BIG if k is not None else 150, r)
        h.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{r}", "content": body}]})
    return h


def tokens(messages: list[dict]) -> list[int]:
    return [COUNTER.count_message(m) for m in messages]


def run(policy_name: str, full: list[dict]) -> dict:
    policy = ContextPolicy.parse("cline" if policy_name == "summary" else policy_name)
    manager, rng, prev, history = ContextManager(), None, None, [full[0]]
    last_sent: list[str] = []
    cost = read = sent_total = 0.0
    recall: list[int] = []
    for r in range(REQUESTS):
        history = [*history, full[1 + 2 * r], full[2 + 2 * r]] if r else [full[0], full[1], full[2]]
        if r == 0:
            history = [full[0], full[1], full[2]]
        usage = None if prev is None else RequestUsage(r, prev, OUT)
        if policy_name == "summary" and prev is not None and prev >= 0.8 * WINDOW and len(history) > 6:
            cost += prev * PRICE_IN + SUMMARY_TOKENS * PRICE_OUT  # the summary request
            end = len(history) - 1
            history = compacted(history, end, words(SUMMARY_TOKENS, 1))
            manager, rng, usage = ContextManager(), None, None
        if policy.has("mask") and usage is not None:
            done = mask_old_results(history, manager.updates, rng, policy.options, r, usage.total)
            if done:
                usage = RequestUsage(r, max(usage.total - done.tokens_removed - OUT, 0), OUT)
        ctx = manager.get_new_context_messages_and_metadata(history, rng, usage, context_window=WINDOW)
        rng = ctx.deleted_range
        sent = ctx.truncated_messages
        keys = [json.dumps(m, sort_keys=True) for m in sent]
        counts = tokens(sent)
        same = 0
        while same < min(len(keys), len(last_sent)) and keys[same] == last_sent[same]:
            same += 1
        cached = sum(counts[:same])
        total = sum(counts)
        cost += cached * PRICE_READ + (total - cached) * PRICE_WRITE + OUT * PRICE_OUT
        read += cached
        sent_total += total
        prev = total + OUT
        last_sent = keys
        recall.append(sum(f"FACT-{k} " in "".join(keys) for k in range(10)))
    return {"policy": policy_name, "usd": cost, "hit": read / sent_total, "max_sent": prev,
            "facts_at_end": recall[-1], "facts_mid": recall[REQUESTS // 2]}


def main() -> None:
    full = session()
    rows = {name: run(name, full) for name in ("layered", "cline", "summary", "mask:keep=5:clear=20000+truncate")}
    for row in rows.values():
        print(f"{row['policy']:<34} ${row['usd']:.2f}  cache hits {100 * row['hit']:.0f}%  "
              f"facts seen mid/end {row['facts_mid']}/{row['facts_at_end']} of 10")
    d, c, s = rows["layered"]["usd"], rows["cline"]["usd"], rows["summary"]["usd"]
    print(f"default layered ÷ Cline truncation alone: {d / c:.2f} (goal ≤ 0.6)")
    print(f"default layered ÷ summary compaction alone: {d / s:.2f} (goal ≤ 0.8)")
    print(f"default layered cache-hit share: {100 * rows['layered']['hit']:.0f}% (goal ≥ 80%)")


if __name__ == "__main__":
    main()
