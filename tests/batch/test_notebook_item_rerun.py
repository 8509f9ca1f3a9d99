"""``python -m nbagent.batch --notebook NB`` run again after Ctrl-C cut an item short: the item's
notebook runs again from its first cell, and its row says so (``resumed``) and counts what the
earlier run spent (review of newcomer pass 25)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nbformat
import pytest

from nbagent.batch import notebook_item
from nbagent.batch.item import TASK_FOLDER, ItemSpec


def _item(tmp_path: Path) -> ItemSpec:
    (tmp_path / "d.csv").write_text("x\n1\n")
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell('get_ipython().run_cell_magic("agent", "", "What is 2 * 3?")')]
    nbformat.write(nb, str(tmp_path / "nb.ipynb"))
    return ItemSpec(item=str(tmp_path / "d.csv"), folder=str(tmp_path / "runs" / "d"), prompt="p",
                    notebook=str(tmp_path / "nb.ipynb"))


def _figures(requests: int, cost: float) -> dict[str, Any]:
    return {"prompts": 1, "requests": requests, "cost_usd": cost, "budget_usd": cost, "unpriced_requests": 0,
            "retries": 0, "truncations": 0, "rate_limit_wait_s": 0.0}


def _run(monkeypatch: pytest.MonkeyPatch, spec: ItemSpec) -> dict[str, Any]:
    """Run the item, its notebook's run standing for one that sends 2 requests ($0.02)."""
    import nbagent.classroom as classroom
    import nbagent.notebook.autorun as autorun

    task_root = Path(spec.folder).resolve() / TASK_FOLDER

    def run_notebook(*_args: object, **_kwargs: object) -> None:
        (task_root / "this-run").mkdir()
        (task_root / "this-run" / "session.json").write_text("{}")

    monkeypatch.setattr(autorun, "run_notebook", run_notebook)
    monkeypatch.setattr(classroom, "_folder_figures", lambda _task: _figures(2, 0.02))
    return dict(notebook_item.run_notebook_item(spec))


def test_a_notebook_item_never_started_is_not_resumed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    row = _run(monkeypatch, _item(tmp_path))
    assert row["resumed"] is False and row["requests"] == 2


def test_a_notebook_item_cut_short_then_run_again_says_resumed_and_counts_the_earlier_spend(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """On nb25's code the re-run row read ``resumed: False``, as for an item never started, while its
    agent cells had asked the model again and its figures held the earlier run's requests."""
    spec = _item(tmp_path)
    earlier = Path(spec.folder).resolve() / TASK_FOLDER / "s0"
    earlier.mkdir(parents=True)
    (earlier / "session.json").write_text("{}")  # the cut-short run's session: no result.json
    row = _run(monkeypatch, spec)
    assert row["resumed"] is True and row["outcome"] == "end_turn"
    assert row["requests"] == 4 and row["cost_usd"] == pytest.approx(0.04)  # both runs' requests
