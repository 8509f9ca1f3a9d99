"""The notes file (the memory-tool pattern): off by default; on, a ``notes`` tool keeps a bounded
file in the task folder and every prompt carries it, so what the agent noted outlives masking."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from nbagent import Agent
from nbagent.engine.contracts.config import SessionConfig
from nbagent.engine.contracts.tool_api import ToolContext
from nbagent.engine.loop.notes import (
    NOTES_FILE,
    NOTES_HEADER,
    NotesFile,
    NotesNotRestoredError,
    NotesTool,
    notes_blocks,
)
from nbagent.providers.simulated import SimulatedAPI, text_reply, tool_reply
from tests.engine.loop._blocks import as_text
from tests.engine.loop.test_context_policy_loop import Load
from tests.engine.loop.test_query_support import messages_requests


def scripted(body: dict[str, Any]) -> Any:
    """'note X' writes X to the notes; 'load' loads a big part; anything else answers."""
    last = body["messages"][-1]["content"]
    if any(isinstance(b, dict) and b.get("type") == "tool_result" for b in last):
        return text_reply("done")
    prompt = next(b["text"] for b in last if b.get("type") == "text")
    if prompt.startswith("note "):
        return tool_reply("notes", {"command": "append", "text": prompt[5:]})
    if prompt.startswith("load"):
        return tool_reply("load", {"part": int(prompt.split()[1])})
    return text_reply("ok")


def agent(tmp_path: Path, api: SimulatedAPI, **settings: Any) -> Agent:
    return Agent(provider="simulated", simulated_options={"api": api}, cwd=tmp_path, tools=[Load()],
                 task_dir=tmp_path / "task", **settings)


def tool_names(request: Any) -> list[str]:
    return [t["name"] for t in request.body.get("tools", [])]


def test_notes_are_off_by_default_no_tool_no_block(tmp_path: Path) -> None:
    assert SessionConfig().notes == 0
    api = SimulatedAPI(responder=scripted, thinks_by_default=False)
    a = agent(tmp_path, api)
    a.run_sync("note the key is 42")
    request = messages_requests(api)[-1]
    assert "notes" not in tool_names(request) and NOTES_HEADER not in json.dumps(request.body)
    assert not (tmp_path / "task" / NOTES_FILE).exists()
    a.close()


def test_what_the_agent_notes_is_in_the_next_prompt_and_survives_masking(tmp_path: Path) -> None:
    api = SimulatedAPI(responder=scripted, thinks_by_default=False)
    a = agent(tmp_path, api, notes=2_000, context="mask:keep=1:clear=2000")
    a.run_sync("note FACT-7: region 7 revenue 1959 k$")
    assert (tmp_path / "task" / NOTES_FILE).read_text() == "FACT-7: region 7 revenue 1959 k$"
    for part in range(3):  # big results: masking clears the notes call's result with them
        a.run_sync(f"load {part}")
    a.run_sync("what was region 7's revenue?")
    request = messages_requests(api)[-1]
    assert "notes" in tool_names(request)
    prompt = request.body["messages"][-1]["content"]
    texts = [b["text"] for b in prompt if b.get("type") == "text"]
    assert texts[0] == "what was region 7's revenue?"
    assert f"{NOTES_HEADER}\nFACT-7: region 7 revenue 1959 k$" in texts
    assert any(x.layer == "mask" for r in a.records for x in r.context_actions)
    assert "Notes saved" not in json.dumps(request.body["messages"])  # the notes call's own result was cleared
    copy = a.save(tmp_path / "copy")
    a.close()
    assert (copy / NOTES_FILE).read_text() == "FACT-7: region 7 revenue 1959 k$"  # a copy keeps the notes
    b = Agent.resume(copy, provider="simulated", simulated_options={"api": api}, tools=[Load()], notes=2_000)
    b.run_sync("again?")
    assert "FACT-7" in json.dumps(messages_requests(api)[-1].body["messages"][-1])  # read back from the folder
    b.close()


def run(tool: NotesTool, **tool_input: Any) -> Any:
    return asyncio.run(tool.run(tool.validate(tool_input), ToolContext(cwd=Path("."))))


def test_a_write_past_the_bound_is_refused_whole_with_the_sizes(tmp_path: Path) -> None:
    notes = NotesFile(tmp_path)
    tool = NotesTool(notes, limit=20)
    assert run(tool, command="view").content == "(no notes yet)"
    assert "Notes saved (5 of 20" in run(tool, command="write", text="alpha").content
    assert run(tool, command="append", text="beta").content.startswith("Notes saved (10")
    refused = run(tool, command="append", text="x" * 15)
    assert refused.is_error and "26 characters and the bound is 20" in refused.content
    assert notes.read() == "alpha\nbeta" and run(tool, command="view").content == "alpha\nbeta"
    with pytest.raises(Exception, match="command"):
        tool.validate({"command": "delete"})


def test_notes_grown_past_the_bound_outside_the_tool_are_cut_in_the_prompt(tmp_path: Path) -> None:
    notes = NotesFile(tmp_path)
    (tmp_path / NOTES_FILE).write_text("y" * 50)
    [block] = [as_text(b) for b in notes_blocks(notes.read(), 10)]
    assert block["text"].startswith(f"{NOTES_HEADER}\n{'y' * 10}\n[…") and "bound of 10" in block["text"]
    assert notes_blocks(NotesFile(None).read(), 10) == [] and notes_blocks(None, 10) == []
    assert notes_blocks("kept", 0) == []  # off: not in the prompt, whatever the file holds


def test_a_session_without_a_task_folder_keeps_its_notes_in_memory() -> None:
    api = SimulatedAPI(responder=scripted, thinks_by_default=False)
    a = Agent(provider="simulated", simulated_options={"api": api}, notes=500)
    a.run_sync("note remember me")
    a.run_sync("and now?")
    assert "remember me" in json.dumps(messages_requests(api)[-1].body["messages"][-1])
    a.reconfigure(notes=0)  # off again: no tool, no notes in the next prompt
    a.run_sync("still there?")
    last = messages_requests(api)[-1]
    assert "notes" not in tool_names(last) and "remember me" not in json.dumps(last.body["messages"][-1])
    a.close()


def test_the_notes_tools_definition_is_built_once_while_its_bound_stays(monkeypatch) -> None:
    built: list[int] = []
    schema = NotesTool.schema

    def counted(self: NotesTool) -> Any:
        built.append(self.limit)
        return schema(self)

    monkeypatch.setattr(NotesTool, "schema", counted)
    api = SimulatedAPI(responder=scripted, thinks_by_default=False)
    a = Agent(provider="simulated", simulated_options={"api": api}, notes=500)
    for prompt in ("note one", "note two", "and now?"):
        a.run_sync(prompt)
    assert len(messages_requests(api)) == 5 and built == [500]  # was one schema (and one kept tool) per request
    a.reconfigure(notes=800)  # a new bound: a new tool, whose definition says so
    a.run_sync("note three")
    assert built == [500, 800] and "notes" in tool_names(messages_requests(api)[-1])
    a.close()


def test_a_bad_bound_is_refused_with_the_range() -> None:
    with pytest.raises(ValueError, match="0 \\(off\\) to 100,000"):
        SessionConfig(notes=-1)


def prompt_texts(api: SimulatedAPI) -> list[str]:
    """The text blocks of the last request's prompt (its last message)."""
    return [b["text"] for b in messages_requests(api)[-1].body["messages"][-1]["content"] if b.get("type") == "text"]


def three_noted_turns(a: Agent) -> None:
    for fact in ("A", "B", "C"):  # each turn's notes call appends one fact through the real tool
        a.run_sync(f"note {fact}")


def test_a_rollback_restores_the_notes_as_they_were_before_the_rolled_back_turns(tmp_path: Path) -> None:
    api = SimulatedAPI(responder=scripted, thinks_by_default=False)
    a = agent(tmp_path, api, notes=500)
    three_noted_turns(a)
    notes_md = tmp_path / "task" / NOTES_FILE
    assert notes_md.read_text() == "A\nB\nC" and a.notes == "A\nB\nC"
    a.rollback(2)  # turn 3 is undone: the notes are as turn 3 began (as turn 2 left them)
    assert notes_md.read_text() == "A\nB" and a.turn == 2
    a.run_sync("what do you know?")
    assert f"{NOTES_HEADER}\nA\nB" in prompt_texts(api) and "C" not in json.dumps(prompt_texts(api))
    a.rollback(1)
    assert notes_md.read_text() == "A"
    a.rollback(0)  # before the first turn there were no notes
    assert notes_md.read_text() == "" and a.notes == ""
    a.close()


def test_a_resumed_session_rolls_its_notes_back_too(tmp_path: Path) -> None:
    api = SimulatedAPI(responder=scripted, thinks_by_default=False)
    a = agent(tmp_path, api, notes=500)
    three_noted_turns(a)
    a.run_sync("nothing to note")  # a turn that leaves the notes as they were keeps no copy of them
    a.close()
    marks = json.loads((tmp_path / "task" / "turn_marks.json").read_text())
    assert [m["notes"] for m in marks] == ["", "A", "A\nB", "A\nB\nC"]
    b = Agent.resume(tmp_path / "task", provider="simulated", simulated_options={"api": api}, tools=[Load()], notes=500)
    b.rollback(3)  # turn 4 changed nothing: the notes stay
    assert b.notes == "A\nB\nC"
    b.rollback(1)
    assert (tmp_path / "task" / NOTES_FILE).read_text() == "A"
    b.run_sync("and now?")
    assert f"{NOTES_HEADER}\nA" in prompt_texts(api) and "A\nB" not in json.dumps(prompt_texts(api))
    b.close()


def test_a_turn_with_the_notes_off_keeps_them_for_a_rollback_across_it(tmp_path: Path) -> None:
    api = SimulatedAPI(responder=scripted, thinks_by_default=False)
    a = agent(tmp_path, api, notes=500)
    a.run_sync("note A")
    a.reconfigure(notes=0)
    a.run_sync("hello")  # off: no tool, the notes file stays as turn 1 left it
    a.reconfigure(notes=500)
    a.run_sync("note B")
    a.rollback(1)
    assert a.notes == "A"
    a.close()


def test_notes_switched_on_after_the_first_turn_are_emptied_by_a_rollback_before_them(tmp_path: Path) -> None:
    api = SimulatedAPI(responder=scripted, thinks_by_default=False)
    a = agent(tmp_path, api)  # off: the first turn's mark keeps no notes at all
    a.run_sync("hello")
    a.reconfigure(notes=500)
    a.run_sync("note X")
    assert a.notes == "X"
    a.rollback(0)
    assert (tmp_path / "task" / NOTES_FILE).read_text() == "" and a.notes == ""
    a.close()


def test_an_in_memory_session_rolls_its_notes_back() -> None:
    api = SimulatedAPI(responder=scripted, thinks_by_default=False)
    a = Agent(provider="simulated", simulated_options={"api": api}, notes=500)
    three_noted_turns(a)
    a.rollback(1)
    assert a.notes == "A"
    a.close()


def test_notes_that_cannot_be_written_back_leave_the_session_as_it_was(tmp_path: Path, monkeypatch) -> None:
    api = SimulatedAPI(responder=scripted, thinks_by_default=False)
    a = agent(tmp_path, api, notes=500)
    three_noted_turns(a)
    history = list(a.history)

    def fail(self: NotesFile, text: str) -> None:
        raise PermissionError("read-only folder")

    monkeypatch.setattr(NotesFile, "write", fail)
    with pytest.raises(NotesNotRestoredError, match="Nothing changed"):
        a.rollback(1)
    assert list(a.history) == history and a.turn == 3 and a.notes == "A\nB\nC"
    with pytest.raises(ValueError, match="no turn 7"):
        a.rollback(7)
    a.close()
