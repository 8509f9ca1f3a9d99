"""What each request sent (``%agent saw``) survives a resume, against the simulated API through the
real SDK: in a session that is masked, summary-compacted and truncated, every request rebuilt from a
resumed task folder is the one rebuilt live and the one the API received (without the provider's
cache breakpoints); after a rollback and a resume, so are the kept requests; a task folder of an
earlier version (no ``sent_requests.json``) still loads, and nothing is shown for its requests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from nbagent import Agent
from nbagent.engine.context.mask import is_placeholder
from nbagent.engine.loop.compaction import COMPACT_KEEP
from nbagent.engine.state.compactions import SUMMARY_MARK
from nbagent.engine.state.sent import SentRequest
from nbagent.engine.state.store import SENT_FILE
from nbagent.providers.simulated import SimulatedAPI, text_reply
from tests.engine.loop.test_context_policy_loop import Load
from tests.engine.loop.test_query_support import messages_requests
from tests.engine.loop.test_rollback_across_layers import responder as three_loads
from tests.engine.loop.test_summary_layer import sent_requests, without_breakpoints

POLICY = "mask:keep=1:clear=3000"
WINDOW = 30_000
PROMPT_WORDS = 6_000  # prompts are not clearable: the context grows until truncation acts


def responder(body: dict[str, Any]) -> Any:
    """Three ``load`` calls per prompt (:func:`test_rollback_across_layers.responder`); a summary
    request gets a summary."""
    if "nbagent-compaction" in str(body.get("system")):
        return text_reply("the parts loaded so far")
    return three_loads(body)


def settings(api: SimulatedAPI, tmp_path: Path) -> dict[str, Any]:
    return {"provider": "simulated", "simulated_options": {"api": api}, "cwd": tmp_path, "tools": [Load()],
            "context": POLICY, "context_window": WINDOW}


def prompt(turn: int) -> str:
    return f"prompt {turn} " + "word " * PROMPT_WORDS


def as_json(messages: list[Any]) -> list[str]:
    return [json.dumps(m, sort_keys=True) for m in messages]


def wire(api: SimulatedAPI) -> list[str]:
    """Every agent request the API received (not the summary requests), as the session keeps it."""
    return [json.dumps(without_breakpoints(b["messages"]), sort_keys=True) for b in sent_requests(api)]


def rebuilt(sent: list[SentRequest]) -> list[str]:
    return [json.dumps(s.messages, sort_keys=True) for s in sent]


def masked_compacted_and_truncated(tmp_path: Path, api: SimulatedAPI) -> Agent:
    a = Agent(task_dir=tmp_path / "task", **settings(api, tmp_path))
    for turn in (1, 2, 3):
        a.run_sync(prompt(turn))
    a.compact_sync()
    for turn in (5, 6, 7, 8):
        a.run_sync(prompt(turn))
    assert any(x.layer == "mask" and x.tokens_removed for r in a.records for x in r.context_actions)
    assert any(r.keep == COMPACT_KEEP for r in a.records) and a.totals.truncations >= 1
    return a


def test_every_request_saw_rebuilds_after_a_resume_is_the_one_sent(tmp_path: Path) -> None:
    api = SimulatedAPI(responder=responder, thinks_by_default=False)
    a = masked_compacted_and_truncated(tmp_path, api)
    live, live_messages = list(a.session.sent), rebuilt(list(a.session.sent))
    assert live_messages == wire(api) and len(live) == len(wire(api))
    joined = "".join(live_messages)
    assert SUMMARY_MARK in joined and any(is_placeholder(str(b.get("content"))) for s in live for m in s.messages
                                          for b in m["content"] if isinstance(b, dict))
    a.close()

    b = Agent.resume(tmp_path / "task", **settings(api, tmp_path))
    assert list(b.session.sent) == live  # turn, model, tools, range, time and the system prompt
    assert rebuilt(list(b.session.sent)) == live_messages
    assert all(s.system is b.session.sent[0].system for s in b.session.sent)  # one prompt, shared
    lines = (tmp_path / "task" / SENT_FILE).read_text().splitlines()[1:-1]
    assert len(lines) == len(live) and sum('"system"' in line for line in lines) == 1  # written once
    b.close()


def test_after_a_rollback_and_a_resume_the_kept_requests_are_rebuilt_as_sent(tmp_path: Path) -> None:
    api = SimulatedAPI(responder=responder, thinks_by_default=False)
    a = masked_compacted_and_truncated(tmp_path, api)
    kept_records = next(m.records_len for m in a.session.marks if m.turn == 2)
    kept = [s for s in a.session.sent if s.request <= kept_records]
    kept_messages = rebuilt(kept)
    a.rollback(2)
    assert list(a.session.sent) == kept and rebuilt(list(a.session.sent)) == kept_messages
    assert kept_messages == wire(api)[:len(kept)]
    a.close()

    b = Agent.resume(tmp_path / "task", **settings(api, tmp_path))
    assert list(b.session.sent) == kept and rebuilt(list(b.session.sent)) == kept_messages
    assert len((tmp_path / "task" / SENT_FILE).read_text().splitlines()[1:-1]) == len(kept)  # the file too
    start = len(messages_requests(api))
    b.run_sync(prompt(3))  # the session goes on: the new requests are saved and rebuilt as sent
    new = [s for s in b.session.sent if s.request > kept_records]
    assert new and rebuilt(new) == wire(api)[-len(new):] and len(messages_requests(api)) > start
    b.close()
    c = Agent.resume(tmp_path / "task", **settings(api, tmp_path))
    assert rebuilt(list(c.session.sent)) == kept_messages + rebuilt(new)
    c.close()


def test_a_folder_of_an_earlier_version_loads_with_nothing_to_show_and_is_left_as_it_was(tmp_path: Path) -> None:
    api = SimulatedAPI(responder=responder, thinks_by_default=False)
    a = Agent(task_dir=tmp_path / "task", **settings(api, tmp_path))
    a.run_sync(prompt(1))
    a.close()
    (tmp_path / "task" / SENT_FILE).unlink()  # as an earlier version left it
    before = {p.name: p.read_bytes() for p in (tmp_path / "task").iterdir() if p.name != "nbagent.lock"}

    b = Agent.resume(tmp_path / "task", **settings(api, tmp_path))
    assert list(b.session.sent) == [] and len(b.records) == len(wire(api)) == 4
    b.close()
    after = {p.name: p.read_bytes() for p in (tmp_path / "task").iterdir() if p.name != "nbagent.lock"}
    assert after == before  # nothing new: written back unchanged, no sent_requests.json

    c = Agent.resume(tmp_path / "task", **settings(api, tmp_path))
    c.run_sync(prompt(2))
    assert [s.turn for s in c.session.sent] == [2] * 4 and rebuilt(list(c.session.sent)) == wire(api)[-4:]
    c.close()
    d = Agent.resume(tmp_path / "task", **settings(api, tmp_path))
    assert rebuilt(list(d.session.sent)) == wire(api)[-4:]
    d.close()
