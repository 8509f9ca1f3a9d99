"""A fleet's total ``--budget`` and an item interrupted in an earlier run (a task folder, no result):
its saved session continues, and what it spent before counts in its row. The share the fleet gave it
left that earlier spend out, so the item could spend a whole share on top of it: the fleet's total
passed ``--budget`` by what the interrupted run had spent. Now the earlier spend is taken from the
budget before any share is given, and counted once."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from nbagent.batch import Fleet, ItemSpec
from nbagent.batch.fleet import table
from nbagent.batch.item import RESULT_FILE
from nbagent.batch.worker import run_item

from .test_fleet import data_files

TEMPLATE = ItemSpec(item="", folder="", prompt="", provider="simulated")
PROMPT = "Describe {item} in one line."


class Inline:
    """Runs each item in this process, in turn, noting the share each is given."""

    def __init__(self) -> None:
        self.shares: list[float | None] = []

    def submit(self, spec: ItemSpec) -> ItemSpec:
        self.shares.append(spec.max_budget_usd)
        return spec

    def wait(self, handles: list[ItemSpec]) -> list[tuple[ItemSpec, object]]:
        return [(h, run_item(h)) for h in handles]

    def close(self, cancel: bool = False) -> None:
        pass


def _fleet(items: list[str], out: Path, budget: float | None) -> tuple[list, Inline]:
    pool = Inline()
    results = Fleet(items=items, prompt=PROMPT, out=out, jobs=1, budget_usd=budget, template=TEMPLATE).run(
        lambda _jobs: pool)  # type: ignore[arg-type, return-value]
    return results, pool


@pytest.fixture
def interrupted(tmp_path, monkeypatch) -> tuple[list[str], Path, float]:
    """Three items; the first ran once and was cut off (its task folder, no result), the others never ran."""
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    items, out = data_files(tmp_path, 3), tmp_path / "runs"
    _fleet(items[:1], out, None)
    first = sorted(p for p in out.iterdir() if p.is_dir())[0]
    before = json.loads((first / RESULT_FILE).read_text())["cost_usd"]
    (first / RESULT_FILE).unlink()
    return items, out, before


def test_an_interrupted_items_earlier_spend_is_taken_from_the_total_budget_before_its_share(interrupted):
    items, out, before = interrupted
    budget = before * 3.5

    results, pool = _fleet(items, out, budget)

    assert results[0].resumed is True and results[0].cost_usd == pytest.approx(2 * before, rel=0.05)
    assert pool.shares[0] == pytest.approx(budget - before, rel=0.01)  # was: the whole budget, as if nothing were spent
    # The next item's share is what neither item spent: the earlier spend counted once, not twice.
    assert pool.shares[1] == pytest.approx(budget - results[0].cost_usd, rel=0.01)


def test_a_fleet_whose_budget_the_interrupted_run_used_up_skips_the_rest(interrupted):
    items, out, before = interrupted

    results, pool = _fleet(items, out, before)  # the interrupted run spent the whole budget

    assert [r.outcome for r in results] == ["skipped"] * 3 and pool.shares == []
    assert not (sorted(out.iterdir())[0] / RESULT_FILE).exists()  # still resumable with a bigger budget
    shutil.rmtree(out)


def test_a_skipped_interrupted_items_row_shows_what_it_spent_so_the_table_adds_up(interrupted):
    items, out, before = interrupted

    results, _pool = _fleet(items, out, before)

    assert [r.outcome for r in results] == ["skipped"] * 3
    # was: $0 and 0 requests, though its earlier run's spend is what used the budget up
    assert results[0].cost_usd == pytest.approx(before) and results[0].requests > 0
    assert "earlier" in (results[0].error or "")
    assert table(results)["cost_usd"].sum() == pytest.approx(before)
    assert results[1].cost_usd == 0 and results[1].requests == 0  # never ran: nothing to show


class Dying(Inline):
    """The first item's worker dies (killed, out of memory): the pool hands back its exception."""

    def wait(self, handles: list[ItemSpec]) -> list[tuple[ItemSpec, object]]:
        return [(h, MemoryError("killed") if h.item.endswith("0.csv") else run_item(h)) for h in handles]


def test_an_interrupted_item_whose_worker_then_dies_still_shows_its_earlier_spend(interrupted):
    items, out, before = interrupted
    pool = Dying()

    results = Fleet(items=items, prompt=PROMPT, out=out, jobs=1, budget_usd=before * 3.5, template=TEMPLATE).run(
        lambda _jobs: pool)  # type: ignore[arg-type, return-value]

    assert results[0].outcome == "error" and results[0].cost_usd == pytest.approx(before)  # was: $0
    # What neither the dead item's earlier run nor the next item spent, no less (the spend counted once).
    assert pool.shares[1] == pytest.approx(before * 2.5, rel=0.01)
