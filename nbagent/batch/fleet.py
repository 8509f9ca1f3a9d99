"""A fleet run: one prompt over many items, a concurrency limit, a total budget, and one table.

Items already finished in the output folder (a ``result.json``) are not run again; an item that
was interrupted (a task folder, no result) continues its saved session. The total budget is split
as items start: each gets an equal share of what is neither spent nor held by items still running
(its per-prompt budget) and gives back what it did not spend; an item stops sending requests once
its share is spent (a request already sent completes, so the total can be passed by at most one
request per running item). Items the budget cannot reach are ``skipped``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Sequence

from ..display.format import terminal_line
from .item import ItemResult, ItemRow, ItemSpec, read_result, slug, spent_before
from .pools import Pool

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

COLUMNS = ["item", "outcome", "cost_usd", "requests", "retries", "truncations", "rate_limit_wait_s", "seconds",
           "resumed", "error", "budget_usd", "unpriced_requests"]
MIN_SHARE_USD = 1e-6


@dataclass
class Fleet:
    """One fleet run's items and settings (see ``python -m nbagent.batch --help``)."""

    items: Sequence[str]
    prompt: str
    out: Path
    jobs: int = 4
    budget_usd: float | None = None
    template: ItemSpec | None = None
    _before: dict[str, ItemResult] = field(default_factory=dict, init=False, repr=False)
    """Per unfinished item's folder: what its earlier, interrupted run spent (counted in its row)."""

    def specs(self) -> list[ItemSpec]:
        base = self.template or ItemSpec(item="", folder="", prompt=self.prompt)
        return [replace(base, item=str(Path(item)), folder=str(self.out / slug(item, i)), prompt=self.prompt)
                for i, item in enumerate(self.items)]

    def run(self, pool_factory: Callable[[int], Pool]) -> list[ItemResult]:
        """Run what has not finished; returns every item's result, in item order."""
        specs = self.specs()
        results: dict[str, ItemResult] = {}
        todo: list[ItemSpec] = []
        for spec in specs:
            done = read_result(Path(spec.folder))
            if done is not None:
                results[spec.folder] = done
            else:
                todo.append(spec)
        # An item interrupted in an earlier run continues its saved session and its row counts what
        # it spent then: taken from the budget before any share is given, not on top of its share.
        self._before = {spec.folder: spent_before(Path(spec.folder), spec.item) for spec in todo}
        spent = sum(r.counted_usd for r in results.values()) + sum(b.counted_usd for b in self._before.values())
        if todo:
            spent = self._schedule(todo, results, spent, pool_factory(min(self.jobs, len(todo))))
        return [results[s.folder] for s in specs]

    def _schedule(self, todo: list[ItemSpec], results: dict[str, ItemResult], spent: float, pool: Pool) -> float:
        running: dict[object, tuple[ItemSpec, float]] = {}
        try:
            while todo or running:
                while todo and len(running) < self.jobs:
                    spec = todo.pop(0)
                    share = self._share(spent, running, len(todo) + 1)
                    if share is not None and share < MIN_SHARE_USD:
                        results[spec.folder] = self._skipped(spec)
                        continue
                    running[pool.submit(replace(spec, max_budget_usd=_lower(spec.max_budget_usd, share)))] = \
                        (spec, share or 0.0)
                if not running:
                    break
                for handle, outcome in pool.wait(list(running)):
                    spec, _held = running.pop(handle)
                    before = self._before.get(spec.folder) or ItemResult(spec.item, "")
                    result = _with_earlier(_as_result(spec, outcome), before)
                    results[spec.folder] = result
                    # A model without prices at its stand-in price, never $0; an earlier run's spend counted once.
                    spent += result.counted_usd - before.counted_usd
        except BaseException:
            pool.close(cancel=True)  # an interrupted fleet: unfinished items keep their task folders
            raise
        pool.close()
        return spent

    def _skipped(self, spec: ItemSpec) -> ItemResult:
        """The row of an item the budget cannot reach: what an earlier, interrupted run of it spent (in the
        budget's count already) is in it, not $0, so the table's total is what the fleet spent."""
        before = self._before.get(spec.folder)
        if before is None or not before.requests:
            return ItemResult(spec.item, "skipped", error="the total budget is spent")
        return replace(before, outcome="skipped", error="the total budget is spent (this row is what its earlier, "
                       "interrupted run spent; run again with a larger --budget to continue it)")

    def _share(self, spent: float, running: dict[object, tuple[ItemSpec, float]], left: int) -> float | None:
        if self.budget_usd is None:
            return None
        free = self.budget_usd - spent - sum(held for _spec, held in running.values())
        slots = max(1, min(self.jobs - len(running), left))
        return max(free, 0.0) / slots


def _lower(a: float | None, b: float | None) -> float | None:
    return b if a is None else a if b is None else min(a, b)


def _with_earlier(result: ItemResult, before: ItemResult) -> ItemResult:
    """``result``, or, where it counts less than its earlier, interrupted run had spent (a worker that
    died, or failed before it read its saved session: $0), that run's figures: spent, never un-spent."""
    if result.counted_usd >= before.counted_usd:
        return result
    return replace(result, cost_usd=before.cost_usd, budget_usd=before.budget_usd,
                   requests=max(result.requests, before.requests),
                   unpriced_requests=max(result.unpriced_requests, before.unpriced_requests))


def _as_result(spec: ItemSpec, outcome: ItemRow | BaseException) -> ItemResult:
    if isinstance(outcome, BaseException):  # the worker itself died (killed, out of memory)
        return ItemResult(spec.item, "error", error=f"the worker failed: {type(outcome).__name__}: {outcome}")
    return ItemResult(**outcome)


FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
"""How a spreadsheet tells a formula from text in a CSV cell (OWASP's list)."""


def as_spreadsheet_text(df: "pd.DataFrame") -> "pd.DataFrame":
    """``df`` with each text cell a spreadsheet would read as a formula prefixed with ``'``. The
    items' names are the submitted files' (``=WEBSERVICE("http:"&CHAR(47)&…&A3).csv`` is a valid
    name) and an error is an exception's text: opened in Excel or LibreOffice, ``summary.csv`` ran
    the formula, sending the other rows wherever it pointed."""
    out = df.copy()
    for column in out.columns:
        values = list(out[column])
        if any(isinstance(v, str) and v.startswith(FORMULA_START) for v in values):  # a number column stays numbers
            out[column] = [f"'{v}" if isinstance(v, str) and v.startswith(FORMULA_START) else v for v in values]
    return out


def as_terminal_text(df: "pd.DataFrame") -> "pd.DataFrame":
    """``df`` with each character of a text cell that a terminal would act on or not draw (an escape,
    a newline, a direction mark) shown as a mark, ``⟦U+001B⟧``, as nbagent's cards show them: an
    item's name is the submitted file's, and ``x\\x1b[2K\\x1b[1A….csv`` printed in the table erased
    and rewrote the rows above it (another item's outcome), or set the terminal's title or clipboard
    (OSC 52)."""
    out = df.copy()
    for column in out.columns:
        values = list(out[column])
        if any(isinstance(v, str) and terminal_line(v) != v for v in values):
            out[column] = [terminal_line(v) if isinstance(v, str) else v for v in values]
    return out


def table(results: Sequence[ItemResult]) -> "pd.DataFrame":
    """One row per item: cost, requests, retries, truncations, rate limit wait, outcome."""
    import pandas as pd

    df = pd.DataFrame([asdict(r) for r in results], columns=COLUMNS)
    # Unknown costs are NaN as the docs say: with every item's unknown the column held None (printed "None").
    df["cost_usd"] = df["cost_usd"].astype(float)
    return df
