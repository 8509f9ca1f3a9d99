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



def test_an_item_that_fails_after_its_requests_keeps_what_they_cost(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    # The review of attacker pass 12 (L3): the error row said $0.0 and 0 requests for requests the API
    # had billed, and the fleet gave that money back to the items still to run.
    from nbagent.agent import Agent

    answered = Agent.run_sync

    def run_then_fail(self: Agent, prompt: str) -> object:
        answered(self, prompt)
        raise RuntimeError("the disk filled up")

    monkeypatch.setattr(Agent, "run_sync", run_then_fail)
    (tmp_path / "d1.csv").write_text("a,b\n1,\n")
    row = worker.run_item(ItemSpec(item=str(tmp_path / "d1.csv"), folder=str(tmp_path / "out"),
                                   prompt="Check {item}.", provider="simulated"))
    assert row["outcome"] == "error" and "the disk filled up" in (row["error"] or "")
    assert row["requests"] == 2 and (row["cost_usd"] or 0) > 0 and (row["budget_usd"] or 0) > 0, row


def test_an_items_error_row_holds_no_key_the_exception_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker's exception text went to ``result.json`` and ``summary.csv`` as it was: one naming the
    API key (or a credential variable's value) wrote it there (attacker pass 13)."""
    from nbagent.agent import Agent

    key, token = "sk-ant-api03-" + "Qz7" * 20, "gh-Tok3n-9f8e7d6c5b4a"
    monkeypatch.setenv("ANTHROPIC_API_KEY", key)
    monkeypatch.setenv("GITHUB_TOKEN", token)

    def fail(self: Agent, prompt: str) -> object:
        raise RuntimeError(f"the gateway refused x-api-key {key} (GITHUB_TOKEN={token})")

    monkeypatch.setattr(Agent, "run_sync", fail)
    (tmp_path / "d1.csv").write_text("a,b\n1,\n")
    row = worker.run_item(ItemSpec(item=str(tmp_path / "d1.csv"), folder=str(tmp_path / "out"),
                                   prompt="Check {item}.", provider="simulated"))
    saved = (tmp_path / "out" / "result.json").read_text()
    assert row["outcome"] == "error" and "[redacted]" in str(row["error"])
    assert key not in saved and token not in saved and key not in str(row["error"])
