"""Session totals kept as running sums, so reading them (before every request when a budget is
set, after every turn) costs O(new records), not O(all records)."""

from __future__ import annotations

from typing import Sequence

from .cost import Usage
from .events import RequestRecord, Totals


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
        self._cost = 0.0
        self._unpriced = 0
        self._retries = 0
        self._turns = 0
        self._last_turn: int | None = None

    def of(self, records: Sequence[RequestRecord], truncations: int) -> Totals:
        n = len(records)
        if n < self._seen or (self._seen and records[self._seen - 1] is not self._last):
            self._reset()
        for r in records[self._seen:]:
            self._usage = self._usage + r.usage
            if r.cost_usd is None:
                self._unpriced += 1
            else:
                self._cost += r.cost_usd
            self._retries += r.retries
            # Records come in turn order (a rollback truncates them: the sums are rebuilt), so a
            # new turn number is a new turn; no set of every turn is kept.
            if r.turn != self._last_turn:
                self._turns, self._last_turn = self._turns + 1, r.turn
        self._seen, self._last = n, records[-1] if records else None
        return Totals(requests=n, turns=self._turns, usage=self._usage, cost_usd=self._cost,
                      retries=self._retries, truncations=truncations, unpriced_requests=self._unpriced)
