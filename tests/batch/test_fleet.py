"""``python -m nbagent.batch``: 20 items, 4 at a time, one failing and one interrupted and resumed;
the same on a local Ray instance."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from nbagent.batch import Fleet, ItemSpec
from nbagent.batch.__main__ import main
from nbagent.batch.item import RESULT_FILE

ROOT = Path(__file__).resolve().parents[2]


def data_files(folder: Path, n: int) -> list[str]:
    items = []
    for i in range(n):
        path = folder / f"data{i:02d}.csv"
        path.write_text(f"x,y\n{i},{i * i}\n")
        items.append(str(path))
    return items


def batch(out: Path, items: list[str], *extra: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "ANTHROPIC_API_KEY": ""}
    return subprocess.run([sys.executable, "-m", "nbagent.batch", "Describe {item} in one line.", *items,
                           "--out", str(out), "--jobs", "4", "--provider", "simulated", "--budget", "5", *extra],
                          capture_output=True, text=True, env=env, timeout=600, cwd=out.parent)


def check_fleet(tmp_path: Path, *extra: str) -> None:
    items = data_files(tmp_path, 19) + [str(tmp_path / "missing.csv")]  # one item fails: no such file
    out = tmp_path / "runs"
    first = batch(out, items, *extra)
    assert first.returncode == 1, first.stderr  # not every item answered
    rows = first.stdout.splitlines()
    assert len([r for r in rows if "end_turn" in r]) == 19 and len([r for r in rows if " error " in r]) == 1
    assert "19/20 answered" in first.stdout
    folders = sorted(p for p in out.iterdir() if p.is_dir())
    assert len(folders) == 20 and all((f / RESULT_FILE).exists() for f in folders)
    # Interrupted: an item whose run was cut off has its task folder and no result.
    cut = folders[3]
    (cut / RESULT_FILE).unlink()
    kept = {f: (f / RESULT_FILE).stat().st_mtime_ns for f in folders if f != cut}
    second = batch(out, items, *extra)
    assert second.returncode == 1 and "19/20 answered" in second.stdout
    assert {f: (f / RESULT_FILE).stat().st_mtime_ns for f in kept} == kept  # only the unfinished one ran
    resumed = json.loads((cut / RESULT_FILE).read_text())
    assert resumed["outcome"] == "end_turn" and resumed["resumed"] is True
    assert resumed["requests"] >= 4  # its saved session continued: both runs' requests stay spent
    summary = (out / "summary.csv").read_text().splitlines()
    assert summary[0].startswith("item,outcome,cost_usd,requests,retries,truncations") and len(summary) == 21


def test_twenty_items_four_at_a_time_one_failing_one_interrupted_and_resumed(tmp_path: Path) -> None:
    check_fleet(tmp_path)


@pytest.mark.soak
@pytest.mark.skipif(importlib.util.find_spec("ray") is None,
                    reason="needs the ray extra (pip install -e '.[ray]'; make test installs it)")
def test_the_same_fleet_on_a_local_ray_instance(tmp_path: Path) -> None:
    # A local instance on 127.0.0.1 (its runtime-env agent also listens on the host's own address,
    # on this machine only: nothing connects out of it).
    check_fleet(tmp_path, "--ray", "local")


def test_the_total_budget_is_shared_and_items_past_it_are_skipped(tmp_path: Path) -> None:
    budgets: list[float | None] = []

    class Inline:
        """Runs items in this process (the budget's arithmetic, not the pool's); each costs $0.40."""

        def submit(self, spec: ItemSpec) -> ItemSpec:
            budgets.append(spec.max_budget_usd)
            return spec

        def wait(self, handles: list[ItemSpec]) -> list[tuple[ItemSpec, dict]]:
            return [(h, {"item": h.item, "outcome": "end_turn", "cost_usd": 0.4}) for h in handles]

        def close(self, cancel: bool = False) -> None:
            pass

    fleet = Fleet(items=data_files(tmp_path, 5), prompt="p", out=tmp_path / "o", jobs=2, budget_usd=1.0)
    # Inline hands back partial rows (the fields the budget reads): not a Pool to the type checker.
    results = fleet.run(lambda jobs: Inline())  # type: ignore[arg-type, return-value]
    assert [r.outcome for r in results] == ["end_turn"] * 4 + ["skipped"]
    # two at a time: each an equal share of what is neither spent nor held, given back when done
    assert budgets == [pytest.approx(0.5), pytest.approx(0.5), pytest.approx(0.1), pytest.approx(0.1)]


def test_bad_options_are_refused_with_a_usage_line(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["p", "a.csv", "--jobs", "0"])
    assert "--jobs must be at least 1" in capsys.readouterr().err


def test_item_row_has_the_fields_of_item_result(tmp_path: Path) -> None:
    # A worker hands back write_result's dict as an ItemRow: the TypedDict and the dataclass must not drift.
    import dataclasses
    import typing

    from nbagent.batch.item import ItemResult, ItemRow, write_result

    hints = typing.get_type_hints(ItemResult)
    assert typing.get_type_hints(ItemRow) == hints
    row = write_result(tmp_path, ItemResult("a.csv", "end_turn", cost_usd=0.5, error=None))
    assert set(row) == {f.name for f in dataclasses.fields(ItemResult)} == set(hints)
    assert ItemResult(**row) == ItemResult("a.csv", "end_turn", cost_usd=0.5)


def test_a_model_without_prices_counts_against_the_total_budget_and_its_cost_is_unknown(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # An unknown Claude model id has no prices: each item's own budget counts its requests at the
    # family's highest price, but the item's row said cost_usd 0.0 and the fleet added that $0 to
    # what was spent, so every item got a fresh share: a $0.02 fleet spent $0.076 over six items.
    from nbagent.batch.worker import run_item

    monkeypatch.setenv("ANTHROPIC_API_KEY", "")

    class Inline:
        def submit(self, spec: ItemSpec) -> ItemSpec:
            return spec

        def wait(self, handles: list[ItemSpec]) -> list[tuple[ItemSpec, object]]:
            return [(h, run_item(h)) for h in handles]

        def close(self, cancel: bool = False) -> None:
            pass

    template = ItemSpec(item="", folder="", prompt="Summarise {item}", provider="simulated", model="claude-opus-9-9")
    fleet = Fleet(items=data_files(tmp_path, 6), prompt="Summarise {item}", out=tmp_path / "o", jobs=1,
                  budget_usd=0.02, template=template)
    with warnings.catch_warnings():  # "no prices", once a process
        warnings.simplefilter("ignore")
        results = fleet.run(lambda jobs: Inline())  # type: ignore[arg-type, return-value]
    ran = [r for r in results if r.outcome != "skipped"]
    assert ran and len(ran) < 6 and [r.outcome for r in results].count("skipped") == 6 - len(ran)
    assert all(r.cost_usd is None and r.unpriced_requests == r.requests > 0 for r in ran)  # unknown, never $0
    counted = [r.budget_usd or 0.0 for r in ran]
    # at most one request past the total per running item (one here)
    assert sum(counted[:-1]) < 0.02 and all(c > 0 for c in counted)


def test_a_result_whose_money_is_negative_or_not_a_number_is_no_result(tmp_path: Path) -> None:
    # A result.json under --out (a folder copied from elsewhere, say) with a negative cost un-spent
    # the fleet's total budget for every item still to run.
    from nbagent.batch.item import read_result

    for cost in (-1000.0, "1", float("nan"), None):  # None with no budget_usd: unknown, read as $0
        (tmp_path / RESULT_FILE).write_text(json.dumps({"item": "a.csv", "outcome": "end_turn", "cost_usd": cost}))
        assert read_result(tmp_path) is None, cost
    (tmp_path / RESULT_FILE).write_text(json.dumps({"item": "a.csv", "outcome": "end_turn", "cost_usd": 0.25}))
    result = read_result(tmp_path)
    assert result is not None and result.counted_usd == 0.25


@pytest.mark.parametrize("share", [None, 5.0])
def test_items_run_under_the_admins_per_prompt_budget(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      share: float | None) -> None:
    # Under an admin file's max_budget_usd, every item failed with AdminLockedError: the worker passed
    # max_budget_usd=None (no --budget) or the fleet's share (above the cap) to Agent(...).
    from nbagent.admin import policy as admin_policy_module
    from nbagent.batch.worker import run_item

    path = tmp_path / "admin.json"
    path.write_text(json.dumps({"max_budget_usd": 0.5, "ledger_dir": str(tmp_path / "ledger")}))
    monkeypatch.setattr(admin_policy_module, "ADMIN_CONFIG_AT_START", str(path))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "")
    item = data_files(tmp_path, 1)[0]
    row = run_item(ItemSpec(item=item, folder=str(tmp_path / "o"), prompt="Summarise {item}", provider="simulated",
                            max_budget_usd=share))
    assert row["outcome"] == "end_turn", row["error"]
    from nbagent.batch.item import within_admin

    assert within_admin(share) == (None if share is None else 0.5) and within_admin(0.1) == 0.1


def test_items_whose_costs_are_all_unknown_read_nan_in_the_table_not_none() -> None:
    """Every item on a model without prices: the printed table read "None" in `cost_usd` (the docs:
    "unknown (empty, `NaN`)"), a column of Python objects where a single priced item made it NaN."""
    import math

    from nbagent.batch.fleet import table
    from nbagent.batch.item import ItemResult

    df = table([ItemResult("d1.csv", "end_turn", cost_usd=None, requests=2, budget_usd=0.01, unpriced_requests=2),
                ItemResult("d2.csv", "end_turn", cost_usd=None, requests=2, budget_usd=0.01, unpriced_requests=2)])

    assert df["cost_usd"].dtype.kind == "f" and all(math.isnan(v) for v in df["cost_usd"])
    assert "None" not in df.drop(columns=["error"]).to_string(index=False)  # as the command prints it
