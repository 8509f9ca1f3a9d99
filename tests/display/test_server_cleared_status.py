"""``%agent context``: tool results that the API's server-side context editing (``context_management``
``clear_tool_uses``) cleared read "cleared by server", not "kept", and the command says what the API
reported. Was: every sent result read "kept" though the model saw a placeholder for the oldest."""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace

from nbagent.display import tables
from nbagent.engine.contracts.messages import Message
from nbagent.engine.contracts.records import ContextAction
from nbagent.engine.loop.completion import server_actions
from nbagent.notebook import commands
from tests.display.test_tables import rec


def _history() -> list[Message]:
    history: list[Message] = [{"role": "user", "content": "task"},
                              {"role": "assistant", "content": [{"type": "text", "text": "ok"}]}]
    for uid, name in (("a", "python"), ("b", "read_file"), ("c", "python"), ("d", "python")):
        history.append({"role": "assistant", "content": [{"type": "tool_use", "id": uid, "name": name, "input": {}}]})
        history.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": uid, "content": "out " * 50}]})
    history.append({"role": "assistant", "content": "done"})
    return history


def _cleared_record(count: int, tokens: int = 1200):
    edit = {"type": "clear_tool_uses_20250919", "cleared_tool_uses": count, "cleared_input_tokens": tokens}
    complete = SimpleNamespace(applied_edits=(edit,), message={"role": "assistant", "content": []},
                               compaction_usage=None)
    actions = server_actions(complete)  # type: ignore[arg-type]  # as the loop records the reply's report
    return dataclasses.replace(rec(5), context_actions=actions)


def test_results_the_server_reported_cleared_are_marked_cleared_oldest_first() -> None:
    record = _cleared_record(2)
    assert tables.server_cleared_tool_uses(record) == 2
    df = tables.messages_df(_history(), None, server_cleared=tables.server_cleared_tool_uses(record))
    assert df["status"].tolist() == ["first pair", "first pair", "kept", "cleared by server", "kept",
                                     "cleared by server", "kept", "kept", "kept", "kept", "kept"]


def test_a_tool_the_edit_never_clears_is_skipped() -> None:
    df = tables.messages_df(_history(), None, server_cleared=2, never_cleared=("read_file",))
    assert [i for i, s in enumerate(df["status"]) if s == "cleared by server"] == [3, 7]


def test_agent_context_says_what_the_api_reported_cleared() -> None:
    record = _cleared_record(3, tokens=4321)
    line = commands._server_edits_line(SimpleNamespace(agent=SimpleNamespace(records=[record])))  # type: ignore[arg-type]
    assert "cleared 3 tool result(s) (4,321 input tokens) of request 5" in line and "cleared by server" in line
    assert commands._server_edits_line(SimpleNamespace(agent=SimpleNamespace(records=[rec(1)]))) == ""  # type: ignore[arg-type]
    assert isinstance(record.context_actions[0], ContextAction)
