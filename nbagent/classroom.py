"""A teacher's view of a class: the task folders under a shared folder, summarised per student.

On a hub where each student's sessions persist under ``ROOT/<student>/`` (``AgentMagics.task_root``
set by the hub, see docs/classroom.md), :func:`class_summary` reads every task folder (read only:
a running student's session is not disturbed) and returns one row per student::

    from nbagent.classroom import class_summary
    class_summary("/srv/nbagent/class-2026")

A folder that cannot be read (half written, from a newer version) is counted in ``unreadable``,
never guessed at.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

COLUMNS = ["student", "sessions", "prompts", "requests", "cost_usd", "retries", "truncations",
           "rate_limit_wait_s", "unreadable", "unpriced_requests"]


def _folder_figures(task: Path) -> dict[str, Any] | None:
    """What one task folder spent and did (None when it cannot be read)."""
    from .engine.state.store import SessionStore
    from .engine.state.totals import Spent

    try:
        snap = SessionStore(task).load()
    except Exception:  # noqa: BLE001 - a folder being written or from a newer version: counted, not read
        return None
    records = snap.records
    known = snap.records_len if snap.spent is not None and snap.records_len is not None else 0
    spent = (snap.spent.cost_usd if snap.spent is not None else 0.0) + sum(r.cost_usd or 0.0 for r in records[known:])
    # What budgets count (a request of a model without prices at its family's highest price), and how
    # many requests have no price: the batch's row says their cost is unknown, never $0.
    dropped = snap.spent if snap.spent is not None else Spent()
    counted = dropped + Spent.of(records[known:])
    # The requests its cost counts (rolled back, cut off mid-answer: billed), as the batch's table and
    # %agent cost count them: the rows left alone read "2 requests" beside three requests' money.
    return {"prompts": max((r.turn for r in records), default=0), "requests": counted.requests, "cost_usd": spent,
            "budget_usd": counted.budget_usd, "unpriced_requests": counted.unpriced_requests,
            "retries": sum(r.retries for r in records),
            "truncations": sum(1 for r in records if r.trigger_tokens is not None),
            "rate_limit_wait_s": sum(r.rate_limit_wait_s for r in records)}


def class_summary(root: str | Path) -> "pd.DataFrame":
    """One row per student (the first folder level under ``root``), most expensive first (a cost
    that is unknown, with ``unpriced_requests``, before them)."""
    import pandas as pd

    base = Path(root).expanduser()
    rows: dict[str, dict[str, Any]] = {}
    for meta in sorted(base.glob("*/**/session.json")):
        student = meta.relative_to(base).parts[0]
        row = rows.setdefault(student, {c: 0 for c in COLUMNS} | {"student": student})
        figures = _folder_figures(meta.parent)
        row["sessions"] += 1
        if figures is None:
            row["unreadable"] += 1
            continue
        for key, value in figures.items():
            if key in row:
                row[key] += value
    df = pd.DataFrame(list(rows.values()), columns=COLUMNS)
    # A request of a model without prices has no cost: the student's is unknown (NaN, listed first),
    # never the priced part as if it were all (a student on an unpriced model read $0.0000).
    df["cost_usd"] = df["cost_usd"].astype(float).round(4).where(df["unpriced_requests"] == 0)
    df["rate_limit_wait_s"] = df["rate_limit_wait_s"].astype(float).round(1)
    return df.sort_values("cost_usd", ascending=False, na_position="first", ignore_index=True)


__all__ = ["class_summary"]
