"""Session totals kept as running sums, so reading them (before every request when a budget is
set, after every turn) costs O(new records), not O(all records); and :class:`Spent`, the money a
session has been billed, which a rollback never lowers."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

import pydantic

from ..api_facts.cost import Usage, cost_of, price_of
from ..api_facts.models import ModelInfo, most_expensive_of_family
from ..contracts.events import RequestRecord, Totals
from ..contracts.saved import MAX_MONEY_USD, SAVED_CONFIG, Money, NonNegInt


def budget_cost(record: RequestRecord) -> float:
    """What a budget counts for one request: its cost, or, for a model with no prices, its cost at
    the most expensive known model of its family (a budget is never silently off)."""
    return _counted(record.cost_usd, billed_usage(record), record.model)


def billed_usage(record: RequestRecord) -> Usage:
    """Every token ``record``'s request was billed for: the answer's, and its cut-off attempts'."""
    return record.usage if record.unanswered_usage is None else record.usage + record.unanswered_usage


def _counted(cost_usd: float | None, usage: Usage, model: str) -> float:
    # At most what a file may say a request cost (MAX_MONEY_USD): a record with no price and 1e21
    # tokens (counts are unbounded) was counted at $3e15, and later requests' costs vanished into the sum.
    return cost_usd if cost_usd is not None else min(price_of(usage, most_expensive_of_family(model)), MAX_MONEY_USD)


# Unlike every other saved record, unknown keys are ignored (as before records were validated
# through their dataclass): ``spent`` is a running sum that load recomputes from the request log
# when it lags, so a later version's extra figures lose nothing that matters to this one.
@pydantic.with_config({**SAVED_CONFIG, "extra": "ignore"})
@dataclass(frozen=True, slots=True)
class Spent:
    """Money billed by a set of requests. The session keeps the part of it that a rollback took
    out of its records, so that what was spent is never un-spent (the API billed those requests)."""

    requests: NonNegInt = 0
    cost_usd: Money = 0.0
    """Priced requests' cost (as ``Totals.cost_usd``)."""
    budget_usd: Money = 0.0
    """What budgets count: ``cost_usd`` plus unpriced requests at their stand-in price."""
    unpriced_requests: NonNegInt = 0
    tokens: NonNegInt = 0
    """Every token billed (prompt and output): what token budgets count."""

    @classmethod
    def of(cls, records: Iterable[RequestRecord]) -> "Spent":
        total = cls()
        for r in records:
            total = total + cls(1, r.cost_usd or 0.0, budget_cost(r), int(r.cost_usd is None), billed_usage(r).total_tokens)
        return total

    @classmethod
    def unfinished(cls, usage: Usage, model: str, prices: Mapping[str, ModelInfo] | None) -> "Spent":
        """One request stopped after its answer began, billed for ``usage`` (no record holds it)."""
        cost = cost_of(usage, model, prices)
        return cls(1, cost or 0.0, _counted(cost, usage, model), int(cost is None), usage.total_tokens)

    def __add__(self, other: "Spent") -> "Spent":
        return Spent(self.requests + other.requests, self.cost_usd + other.cost_usd, self.budget_usd + other.budget_usd,
                     self.unpriced_requests + other.unpriced_requests, self.tokens + other.tokens)

    def less(self, other: "Spent") -> "Spent":
        """``self - other``, never below zero (a saved figure older than its records)."""
        return Spent(max(self.requests - other.requests, 0), max(self.cost_usd - other.cost_usd, 0.0),
                     max(self.budget_usd - other.budget_usd, 0.0),
                     max(self.unpriced_requests - other.unpriced_requests, 0), max(self.tokens - other.tokens, 0))


class RunningTotals:
    """Totals of a record list that mostly grows at the end.

    The sums are advanced over records appended since the last call; any other change (a
    rollback, a load replacing the list) is detected by the last record seen no longer being at
    its place, and the sums are rebuilt once.
    """

    def __init__(self) -> None:
        self._reset()

    def _reset(self) -> None:
        self._seen = 0
        self._last: RequestRecord | None = None
        self._usage = Usage()
        self._tokens = 0  # billed: the history's usage and its requests' cut-off attempts
        self._cost = 0.0
        self._budget = 0.0
        self._unpriced = 0
        self._retries = 0
        self._turns = 0
        self._last_turn: int | None = None
        self._spent: tuple[Spent, int, Spent] | None = None  # (dropped, records, their sum) last read

    def _advance(self, records: Sequence[RequestRecord]) -> None:
        n = len(records)
        if n < self._seen or (self._seen and records[self._seen - 1] is not self._last):
            self._reset()
        for r in records[self._seen:]:
            self._usage = self._usage + r.usage
            self._tokens += billed_usage(r).total_tokens
            if r.cost_usd is None:
                self._unpriced += 1
            else:
                self._cost += r.cost_usd
            self._budget += budget_cost(r)
            self._retries += r.retries
            # Records come in turn order (a rollback truncates them: the sums are rebuilt), so a
            # new turn number is a new turn; no set of every turn is kept.
            if r.turn != self._last_turn:
                self._turns, self._last_turn = self._turns + 1, r.turn
        self._seen, self._last = n, records[-1] if records else None

    def spent(self, records: Sequence[RequestRecord], dropped: Spent) -> Spent:
        """Everything billed: ``records`` plus ``dropped`` (requests rolled back out of them)."""
        self._advance(records)
        if self._spent is None or self._spent[0] is not dropped or self._spent[1] != len(records):
            # Made once per change (read before every request): a Spent is validated as it is built.
            self._spent = (dropped, len(records), Spent(len(records), self._cost, self._budget, self._unpriced,
                                                        self._tokens) + dropped)
        return self._spent[2]

    def of(self, records: Sequence[RequestRecord], truncations: int, dropped: Spent = Spent()) -> Totals:
        self._advance(records)
        n = len(records)
        return Totals(requests=n, turns=self._turns, usage=self._usage, cost_usd=self._cost,
                      retries=self._retries, truncations=truncations, unpriced_requests=self._unpriced,
                      spent_usd=self._cost + dropped.cost_usd, spent_requests=n + dropped.requests,
                      spent_unpriced_requests=self._unpriced + dropped.unpriced_requests)
