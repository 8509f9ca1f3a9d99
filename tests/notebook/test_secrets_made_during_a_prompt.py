"""A credential the agent's own code puts in a variable is redacted from that call's output on: the
loop read the notebook's credential variables once per prompt, so ``cfg = dotenv_values(".env");
print(cfg)`` (python allowed) sent the file's passwords to the model in the same prompt (attacker
pass 13). An in-process IPython shell with the offline simulated API."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from nbagent.providers.simulated import ScriptedResponder, text_reply, tool_reply
from tests.notebook.test_magics_inprocess import ip, run, session  # noqa: F401 - the fixture

PASSWORD = "Fresh-Pa55word-9f8e"
CODE = ("cfg = dict(line.split('=', 1) for line in open('settings.txt').read().split())\n"
        "print(cfg)")


def test_a_password_the_agents_code_reads_into_a_variable_is_redacted_in_the_same_prompt(ip: Any,  # noqa: F811
                                                                                       tmp_path: Path) -> None:
    (tmp_path / "settings.txt").write_text(f"DB_HOST=db.internal\nDB_PASSWORD={PASSWORD}\n")
    api = session().agent.simulated_api
    api.responder = ScriptedResponder([tool_reply("python", {"code": CODE}), text_reply("read it")])
    out = run(ip, "%%agent\nWhat does settings.txt configure?")
    assert "done: end_turn" in out
    sent = json.dumps([r.body for r in api.requests])

    assert "db.internal" in sent and "[redacted]" in sent and PASSWORD not in sent
    assert PASSWORD not in json.dumps(list(session().agent.history))


def test_a_password_the_agents_code_displays_in_the_call_that_read_it_is_redacted_in_its_card(ip: Any,  # noqa: F811
                                                                                            tmp_path: Path) -> None:
    """The card (the run's transcript, saved in the notebook) showed ``display(cfg)`` redacted with the
    secrets as the prompt began: the password the same call read was in it."""
    shown = "Shown-Pa55word-7a6b"  # not the first test's: its variable, read at this prompt's start, holds that one
    (tmp_path / "settings.txt").write_text(f"DB_HOST=db.internal\nDB_PASSWORD={shown}\n")
    api = session().agent.simulated_api
    code = CODE.replace("cfg", "shown_cfg").replace("print(shown_cfg)", "display(shown_cfg)")
    api.responder = ScriptedResponder([tool_reply("python", {"code": code}), text_reply("shown")])
    ip.display_pub.outputs.clear()
    out = run(ip, "%%agent\nShow what settings.txt configures")
    assert "done: end_turn" in out and "db.internal" in out and shown not in out


def test_a_password_printed_then_deleted_by_the_same_call_stays_redacted(ip: Any) -> None:  # noqa: F811
    # Reading the secrets again after code ran replaced the ones read at the prompt's start: a
    # variable the code deleted was no secret any more for its own output (the review, this session).
    old = "Old-Pa55word-1a2b3c"
    ip.user_ns["db_password"] = old
    api = session().agent.simulated_api
    code = "p = db_password\ndel db_password\nprint('x', p)"
    api.responder = ScriptedResponder([tool_reply("python", {"code": code}), text_reply("ok")])
    out = run(ip, "%%agent\nrun it")
    assert "done: end_turn" in out
    assert old not in json.dumps([r.body for r in api.requests])
