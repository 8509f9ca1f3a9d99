"""What the model saw is kept as a reference into the session (history length, range, updates'
time), not a copy, and rebuilt on demand exactly as it was sent — across truncations, later
turns and a prompt merged into a failed turn's message. Totals are running sums that follow
rollbacks."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from nbagent.engine.api_facts.cost import Usage
from nbagent.engine.contracts.events import Totals
from nbagent.engine.contracts.messages import MessageParam
from nbagent.engine.loop.rollback import rollback
from nbagent.engine.state.totals import Spent
from nbagent.providers.simulated import Fault, SimulatedAPI, text_reply
from tests.engine.loop.test_query_support import make_engine, messages_requests, run
from tests.engine.state.test_session_rollback import CWD, three_turns, turn_script, without_cache_control


async def test_every_request_is_rebuilt_as_the_api_received_it(tmp_path: Path) -> None:
    api = SimulatedAPI([r for t in (1, 2, 3) for r in turn_script(t)])
    engine, _ = await three_turns(tmp_path, api)
    wire = [without_cache_control(r.body["messages"]) for r in messages_requests(api)]
    sent = engine.session.sent
    assert len(sent) == len(wire) == 6
    assert [s.messages for s in sent] == wire
    assert sent[-1].deleted_range == (2, 5) and all(s.system is sent[0].system for s in sent)


async def test_a_request_before_a_merged_prompt_is_rebuilt_without_it(tmp_path: Path) -> None:
    api = SimulatedAPI([text_reply("first"), text_reply("third")], faults={2: Fault.auth()})
    engine = make_engine(api, tmp_path, cwd=CWD)
    await run(engine, "one")
    await run(engine, "two")  # fails: its prompt waits in the last user message
    await run(engine, "three")  # merged into that message
    wire = [without_cache_control(r.body["messages"]) for r in messages_requests(api) if r.reply is not None]
    assert [s.messages for s in engine.session.sent] == [wire[0], wire[-1]]


async def test_totals_are_running_sums_that_follow_a_rollback(tmp_path: Path) -> None:
    api = SimulatedAPI([r for t in (1, 2, 3) for r in turn_script(t)])
    engine, _ = await three_turns(tmp_path, api)
    session = engine.session
    assert session.totals == totals_from_records(session.records, truncations=session.truncations)
    spent = session.totals.spent_usd
    rollback(engine, 1)
    assert session.totals == totals_from_records(session.records, truncations=session.truncations,
                                                 dropped=session.dropped)
    assert session.totals.spent_usd == pytest.approx(spent)  # rolled back, but billed all the same
    assert session.totals.requests == 2 and len(session.sent) == 2


def test_tool_use_ids_follow_the_history_as_it_grows_shrinks_and_changes() -> None:
    from nbagent.engine.state.session import Session

    def call(uid: str) -> MessageParam:
        return {"role": "assistant", "content": [{"type": "tool_use", "id": uid, "name": "x", "input": {}}]}

    s = Session()
    s.history += [{"role": "user", "content": "q"}, call("a")]
    assert s.tool_use_ids() == {"a"}
    s.history += [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a", "content": "r"}]}, call("b")]
    assert s.tool_use_ids() == {"a", "b"}
    del s.history[2:]  # a rollback
    assert s.tool_use_ids() == {"a"}
    s.history[1] = call("c")  # replaced in place (a compaction, a withdrawn turn)
    assert s.tool_use_ids() == {"c"}


def totals_from_records(records: list[Any], *, truncations: int = 0, dropped: Any = None) -> Totals:
    """The totals summed from scratch: what the session's running sums must equal."""
    usage, cost, unpriced = Usage(), 0.0, 0
    for r in records:
        usage = usage + r.usage
        if r.cost_usd is None:
            unpriced += 1
        else:
            cost += r.cost_usd
    extra = dropped or Spent()
    return Totals(requests=len(records), turns=len({r.turn for r in records}), usage=usage, cost_usd=cost,
                  retries=sum(r.retries for r in records), truncations=truncations, unpriced_requests=unpriced,
                  spent_usd=cost + extra.cost_usd, spent_requests=len(records) + extra.requests)
