"""An item's ``seconds`` is the item's own time: a fresh worker's start (the SDK's import, the
tokenizer's tables) is not in its first item's (teacher pass 10, N1: 10 s against 0.1 s)."""

from __future__ import annotations

import types
from pathlib import Path

import pytest

from nbagent.batch import worker
from nbagent.batch.item import ItemSpec


def test_a_workers_warm_up_is_not_counted_in_its_first_items_seconds(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    clock = [1_000.0]
    monkeypatch.setattr(worker, "time", types.SimpleNamespace(monotonic=lambda: clock[0]))

    def slow_start() -> None:  # what a fresh interpreter pays once: ten seconds on the worker's clock
        clock[0] += 10.0

    monkeypatch.setattr(worker, "warm_up", slow_start)
    (tmp_path / "d1.csv").write_text("a,b\n1,\n")
    row = worker.run_item(ItemSpec(item=str(tmp_path / "d1.csv"), folder=str(tmp_path / "out"),
                                   prompt="Check {item}.", provider="simulated"))
    assert row["outcome"] == "end_turn", row
    assert row["seconds"] == 0.0  # the fake clock moved only while the worker warmed up

