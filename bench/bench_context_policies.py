"""Context policies compared on one synthetic 300-request data-analysis session: dollars, cache-hit
share and a recall probe, with the documented prompt-cache rules and Sonnet 5.5 prices.

The session (:func:`nbagent.explorer.data_analysis_session`): a task, then 300 requests; 40 of
them return a ~5k-token tool result (a data load), the others a short one (~150 tokens), each
assistant turn ~120 tokens; facts are planted in the first 10 large results (``FACT-k``). Window
200k (Cline's max allowed 160k). The replay is the context-policy explorer's
(:func:`nbagent.explorer.compare_policies`, the same function notebook 07 runs, so its tables are
these numbers): per request each policy's layers act through nbagent's engine (summary with a
summary as long as its bound that keeps no planted fact; masking; Cline truncation), then the
cache is charged as the API documents it (a read needs a cached breakpoint: a change early in the
prompt rewrites everything after it; a masking policy's one-hour cache anchors as nbagent sends
them) at $2/M input, $2.50/M write (5-minute), $4/M write (one-hour), $0.10/M read, $10/M output.
A second table adds the server layers (``server``, ``all``, ``compact``), replayed through the
simulated API's own context editing and compaction, the cache charged on what the server processed.
Run: ``python bench/bench_context_policies.py``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, os.environ.get("NBAGENT_SRC", str(Path(__file__).resolve().parents[1])))

from nbagent.explorer import (  # noqa: E402
    compare_policies,
    comparison_df,
    data_analysis_session,
    planted_facts,
    recall_df,
)

POLICIES = ("layered", "cline", "summary", "mask:keep=3:clear=30000", "mask:keep=5:clear=10000")
SERVER_POLICIES = ("layered", "cline", "summary", "server", "all", "compact")
"""The server layers beside the client's: ``server`` (edit+compact), ``all`` and server compaction
alone (on this session neither ``server`` nor ``all`` reaches the compaction's 150k trigger)."""
WINDOW = 200_000


def results(policies: tuple[str, ...] = POLICIES) -> list:
    """The comparison the bench prints (notebook 07's test compares its tables with these)."""
    return compare_policies(data_analysis_session(), policies, WINDOW, facts=planted_facts())


def main() -> None:
    rows = results()
    print(comparison_df(rows).to_string(index=False))
    print()
    print("first request that no longer shows each planted fact (blank: still shown at the end):")
    print(recall_df(rows).to_string(index=False))
    by = {r.label: r for r in rows}
    d, c, s = by["layered"].usd, by["cline"].usd, by["summary"].usd
    print(f"default layered ÷ Cline truncation alone: {d / c:.2f} (goal ≤ 0.6)")
    print(f"default layered ÷ summary compaction alone: {d / s:.2f} (goal ≤ 0.8)")
    print(f"default layered cache-hit share: {100 * by['layered'].cache_hit_share:.0f}% (goal ≥ 80%)")
    print()
    print("with the server layers (replayed through the simulated API's edits and compaction):")
    rows = results(SERVER_POLICIES)
    print(comparison_df(rows).to_string(index=False))
    print(recall_df(rows).to_string(index=False))
    by = {r.label: r for r in rows}
    print(f"server ÷ default layered: {by['server'].usd / d:.2f}; compact ÷ default layered: "
          f"{by['compact'].usd / d:.2f}; server cache-hit share {100 * by['server'].cache_hit_share:.0f}%")


if __name__ == "__main__":
    main()
