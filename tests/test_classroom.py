"""The teacher's summary of a class's task folders."""

from __future__ import annotations

import warnings
from pathlib import Path

from nbagent import Agent
from nbagent.classroom import class_summary
from nbagent.providers.anthropic import simulated_provider
from nbagent.providers.simulated import SimulatedAPI, text_reply, tool_reply


def session(folder: Path, prompts: int, tool: bool = False) -> None:
    replies = []
    for _ in range(prompts):
        replies += ([tool_reply("list_files", {"path": "."})] if tool else []) + [text_reply("ok")]
    agent = Agent(provider=simulated_provider(SimulatedAPI(replies)), task_dir=folder, cwd=folder.parent)
    for _ in range(prompts):
        agent.run_sync("go")
    agent.close()


def test_one_row_per_student_with_what_their_sessions_spent(tmp_path: Path) -> None:
    root = tmp_path / "class"
    session(root / "ada" / "20261202-1", prompts=2, tool=True)
    session(root / "ada" / "20261202-2", prompts=1)
    session(root / "bob" / "20261202-1", prompts=1)
    (root / "eve" / "broken").mkdir(parents=True)
    (root / "eve" / "broken" / "session.json").write_text("{not json")
    df = class_summary(root)
    rows = {r["student"]: r for r in df.to_dict("records")}
    assert set(rows) == {"ada", "bob", "eve"}
    assert (rows["ada"]["sessions"], rows["ada"]["prompts"], rows["ada"]["requests"]) == (2, 3, 5)
    assert (rows["bob"]["sessions"], rows["bob"]["requests"]) == (1, 1)
    assert rows["ada"]["cost_usd"] > rows["bob"]["cost_usd"] > 0
    assert (rows["eve"]["sessions"], rows["eve"]["unreadable"], rows["eve"]["requests"]) == (1, 1, 0)
    assert df["student"].tolist()[0] == "ada"  # most expensive first


def test_a_student_on_a_model_without_prices_has_an_unknown_cost_never_zero(tmp_path: Path) -> None:
    # An unknown model id has no prices: the summary said cost_usd 0.0 for the student, last in the
    # list, as if nothing had been spent.
    import math


    root = tmp_path / "class"
    session(root / "bob" / "20261202-1", prompts=1)
    agent = Agent(provider=simulated_provider(SimulatedAPI([text_reply("ok")])), task_dir=root / "ada" / "s",
                  cwd=root, model="claude-opus-9-9")
    with warnings.catch_warnings():  # "no prices", once a process
        warnings.simplefilter("ignore")
        agent.run_sync("go")
    agent.close()
    df = class_summary(root)
    rows = {r["student"]: r for r in df.to_dict("records")}
    assert math.isnan(rows["ada"]["cost_usd"]) and rows["ada"]["unpriced_requests"] == 1
    assert rows["bob"]["cost_usd"] > 0 and rows["bob"]["unpriced_requests"] == 0
    assert df["student"].tolist()[0] == "ada"  # unknown first: a teacher looks there


def test_a_students_requests_are_those_their_cost_counts_rolled_back_ones_included(tmp_path: Path) -> None:
    """``cost_usd`` counts every request billed (a rollback never un-spends), ``requests`` counted the
    rows left: 1 request beside three billed requests' money, where the batch's table and
    ``%agent cost`` say 3."""
    folder = tmp_path / "class" / "ada" / "20261202-1"
    agent = Agent(provider=simulated_provider(SimulatedAPI([text_reply("ok")] * 3)), task_dir=folder, cwd=folder.parent)
    for _ in range(3):
        agent.run_sync("go")
    agent.rollback(1)
    spent = agent.session.spent
    agent.close()

    [row] = class_summary(tmp_path / "class").to_dict("records")

    assert row["requests"] == spent.requests == 3 and abs(row["cost_usd"] - round(spent.cost_usd, 4)) < 1e-9
