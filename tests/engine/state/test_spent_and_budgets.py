"""Money already spent is never un-spent (issue 28): a rollback lowers what the current history
cost, never what the session was billed; the per-prompt budget counts this prompt only and the
session budget counts everything billed, each stopping with a message naming it. Through the
simulated Messages API with the real SDK."""

from __future__ import annotations

import json
from typing import Any

import pytest

from nbagent.engine.contracts.config import RunLimits, SessionConfig
from nbagent.engine.contracts.errors import CorruptFileError
from nbagent.engine.loop.rollback import rollback
from nbagent.engine.state.session import Session
from nbagent.engine.state.store import SESSION_FILE
from nbagent.providers.simulated import SimulatedAPI, text_reply, tool_reply
from tests.engine.loop.test_query_support import done_of, make_engine, messages_requests, run


async def run_with(engine: Any, prompt: str, limits: RunLimits) -> list[Any]:
    return [e async for e in engine.submit_message(prompt, limits=limits)]


def two_requests_per_turn(body: dict) -> Any:
    """A tool call, then an answer: every prompt costs two requests."""
    last = body["messages"][-1]["content"]
    answered = isinstance(last, list) and any(b.get("type") == "tool_result" for b in last)
    return text_reply("done") if answered else tool_reply("echo", {"text": "x " * 50})


async def three_paid_turns(tmp_path: Any, api: SimulatedAPI | None = None, **settings: Any) -> Any:
    engine = make_engine(api or SimulatedAPI(two_requests_per_turn), tmp_path, **settings)
    for t in (1, 2, 3):
        assert done_of(await run(engine, f"task {t}")).reason == "end_turn"
    return engine


async def test_rollback_keeps_spent_and_lowers_only_the_history_cost(tmp_path: Any) -> None:
    engine = await three_paid_turns(tmp_path)
    before = engine.totals
    assert before.spent_usd == pytest.approx(before.cost_usd) and before.spent_requests == 6
    rollback(engine, 1)
    after = engine.totals
    assert after.requests == 2 and after.cost_usd < before.cost_usd  # the current history
    assert after.spent_requests == 6 and after.spent_usd == pytest.approx(before.spent_usd)  # billed
    rollback(engine, 0)
    assert engine.totals.spent_usd == pytest.approx(before.spent_usd) and engine.totals.cost_usd == 0
    # The next prompt adds to what was spent, never restarts it.
    done = done_of(await run(engine, "again"))
    assert done.totals.spent_requests == 8 and done.totals.spent_usd > before.spent_usd


async def test_spent_survives_save_and_load(tmp_path: Any) -> None:
    engine = await three_paid_turns(tmp_path)
    spent = engine.totals.spent_usd
    rollback(engine, 1)
    engine.session.close()
    loaded = Session.load(engine.config.task_dir)
    assert loaded.totals.spent_usd == pytest.approx(spent) and loaded.totals.spent_requests == 6
    assert loaded.totals.requests == 2
    copy = loaded.save(tmp_path / "copy")
    loaded.close()
    again = Session.load(copy)
    assert again.totals.spent_usd == pytest.approx(spent)
    again.close()


async def test_a_folder_without_spent_loads_with_its_records_sum(tmp_path: Any) -> None:
    engine = await three_paid_turns(tmp_path)
    cost = engine.totals.cost_usd
    engine.session.close()
    path = engine.config.task_dir / SESSION_FILE
    meta = json.loads(path.read_text())
    del meta["spent"]  # as an earlier version wrote it
    path.write_text(json.dumps(meta))
    loaded = Session.load(engine.config.task_dir)
    assert loaded.totals.spent_usd == pytest.approx(cost) and loaded.totals.spent_requests == 6
    loaded.close()


async def test_a_negative_spent_on_disk_is_refused_naming_the_field(tmp_path: Any) -> None:
    engine = await three_paid_turns(tmp_path)
    engine.session.close()
    path = engine.config.task_dir / SESSION_FILE
    meta = json.loads(path.read_text())
    meta["spent"]["budget_usd"] = -1.0  # would switch the session budget off
    path.write_text(json.dumps(meta))
    with pytest.raises(CorruptFileError, match="spent.budget_usd"):
        Session.load(engine.config.task_dir)


async def test_the_session_budget_counts_rolled_back_requests(tmp_path: Any) -> None:
    api = SimulatedAPI(two_requests_per_turn)
    engine = await three_paid_turns(tmp_path, api)
    spent = engine.totals.spent_usd
    rollback(engine, 0)
    sent = len(messages_requests(api))
    engine.reconfigure(max_session_budget_usd=spent * 0.99)  # below what was billed, above the history's 0
    done = done_of(await run(engine, "more"))
    assert done.reason == "max_budget" and len(messages_requests(api)) == sent
    assert done.stopped == (f"stopped: the session budget ${spent * 0.99:.4f} reached "
                            f"(${spent:.4f} spent in this session)")


async def test_the_prompt_budget_counts_this_prompt_only(tmp_path: Any) -> None:
    engine = await three_paid_turns(tmp_path)
    spent = engine.totals.spent_usd
    # Less than the session spent, more than one prompt costs: the prompt runs to its answer
    # (counting the session, it stopped before its first request).
    done = done_of(await run_with(engine, "four", RunLimits(max_budget_usd=spent * 0.9)))
    assert done.reason == "end_turn" and done.totals.spent_requests == 8
    # A budget smaller than one request: exactly one request, then a stop naming the prompt budget
    # and what this prompt (not the session) spent.
    before = done.totals.spent_usd
    done = done_of(await run_with(engine, "five", RunLimits(max_budget_usd=1e-6)))
    assert done.reason == "max_budget" and done.totals.spent_requests == 9
    in_prompt = done.totals.spent_usd - before
    assert done.stopped == f"stopped: this prompt's budget $0.000001 reached (${in_prompt:.4f} spent in this prompt)"


def test_budgets_are_checked_settings_with_one_default() -> None:
    assert SessionConfig().max_session_budget_usd is None and SessionConfig().max_budget_usd is None
    with pytest.raises(ValueError, match="max_session_budget_usd must be >= 0"):
        SessionConfig(max_session_budget_usd=-1)


@pytest.mark.parametrize("limits", [{"max_budget_usd": float("nan")}, {"max_budget_usd": -0.5},
                                    {"max_budget_usd": "1"}, {"max_requests": 0}, {"token_budget": -1}])
def test_a_prompts_limits_that_could_never_stop_it_are_refused(limits: dict[str, Any]) -> None:
    # A NaN budget compared False with every cost: a prompt given one ran without a budget.
    with pytest.raises(ValueError, match=f"{next(iter(limits))} must be"):
        RunLimits(**limits)
    assert RunLimits(max_budget_usd=0.0, max_requests=1, token_budget=1).max_budget_usd == 0.0
