"""Replay in an in-process shell: a fresh kernel shows recorded turns without a request, an edited
prompt forks the record and runs live from there (no front-end: the record is matched by prompt)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator

import pytest
from IPython.core.displaypub import CapturingDisplayPublisher
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output

from nbagent import Agent
from nbagent.notebook import magics as magics_mod
from nbagent.notebook.document.replay import load_index, sessions_dir
from nbagent.notebook.document.replay_lines import UNSIGNED_LINE

FIRST = "what is 17 * 23? use python"
SECOND = "now add 5 to it with python"


@pytest.fixture
def ip(tmp_path, monkeypatch) -> Iterator[Any]:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    shell = InteractiveShell.instance()
    saved = shell.display_pub
    shell.display_pub = CapturingDisplayPublisher()
    shell.run_cell("%load_ext nbagent")
    magics = magics_mod.active_magics()
    magics.allow = ["python"]
    try:
        restart(magics)
        yield shell
    finally:
        restart(magics)
        magics.allow = []
        shell.display_pub = saved


def restart(magics: Any) -> None:
    """What a kernel restart leaves: no session, no replay cursor."""
    if magics.current is not None:
        magics.current.agent.close()
    magics.current = None
    magics._document = None


def cell(ip: Any, prompt: str, line: str = "") -> str:
    ip.display_pub.outputs.clear()
    with capture_output() as cap:
        result = ip.run_cell(f"%%agent {line}\n{prompt}")
    assert result.error_in_exec is None, (result.error_in_exec, cap.stdout)
    shown = [o.data.get("text/plain", "") for o in cap.outputs]
    return "\n".join([cap.stdout, *shown, *(o["data"].get("text/plain", "") for o in ip.display_pub.outputs)])


def agent() -> Agent:
    session = magics_mod.active_magics().current
    assert session is not None
    return session.agent


def test_a_fresh_kernel_replays_recorded_turns_with_no_request(ip, tmp_path):
    live = [cell(ip, FIRST), cell(ip, SECOND)]
    recorded = agent().session.task_dir
    assert Path(recorded).parent == sessions_dir(tmp_path)
    restart(magics_mod.active_magics())

    replayed = [cell(ip, FIRST), cell(ip, SECOND)]

    assert all("replayed: session" in r for r in replayed)
    assert magics_mod.active_magics().current is None  # no Agent, no provider, no SDK: nothing could ask
    for before, after in zip(live, replayed, strict=True):
        assert _transcript(before) == _transcript(after)


# Lines about the kernel rather than the record: which model a live run would use, what the
# front-end cannot do, and the replay marker itself.
_NOT_RECORDED = ("⟲ replayed: session", "ⓘ no notebook bridge", "ℹ No ANTHROPIC_API_KEY")


def _transcript(output: str) -> str:
    """What the cell shows of the run once it ended: the final transcript (a live view's first
    display is replaced by it in a notebook; in-process capture keeps both)."""
    final = output[output.rfind("nbagent · "):]
    return "\n".join(line for line in final.splitlines() if not line.startswith(_NOT_RECORDED)).strip()


def test_a_new_prompt_after_the_replayed_ones_continues_the_notebooks_own_record(ip, monkeypatch):
    monkeypatch.setenv("JPY_SESSION_NAME", "analysis.ipynb")  # Jupyter Server says which notebook
    cell(ip, FIRST)
    recorded = agent().session.task_dir
    restart(magics_mod.active_magics())
    cell(ip, FIRST)

    out = cell(ip, SECOND)

    assert "replayed" not in out
    assert agent().session.task_dir == recorded and agent().turn == 2


def test_a_kernel_that_does_not_know_its_notebook_goes_on_in_a_copy_never_in_the_record(ip, tmp_path):
    # nbclient, papermill: no notebook name, so it cannot tell a copy of the notebook from the original
    cell(ip, FIRST)
    recorded = Path(agent().session.task_dir)
    restart(magics_mod.active_magics())
    cell(ip, FIRST)

    out = cell(ip, SECOND)

    assert "replayed" not in out
    copied = Path(agent().session.task_dir)
    assert copied != recorded and agent().turn == 2
    assert [t.prompt for t in load_index(tmp_path, copied.name).turns] == [FIRST, SECOND]
    assert [t.prompt for t in load_index(tmp_path, recorded.name).turns] == [FIRST]  # the record stays whole


def test_a_record_continued_live_uses_your_model_never_the_folders(ip):
    magics = magics_mod.active_magics()
    yours = magics.model
    try:
        magics.model = "claude-opus-5-5"  # the model the folder was recorded with (received, say)
        cell(ip, FIRST)
        restart(magics)
        magics.model = "claude-haiku-4-5"  # your setting in this kernel
        cell(ip, FIRST)  # replayed: no session loaded

        out = cell(ip, SECOND)  # continues the record live

        assert agent().config.model == "claude-haiku-4-5" and agent().turn == 2
        assert "Continuing this session with claude-haiku-4-5, as set here (it was recorded with claude-opus-5-5)" in out
    finally:
        magics.model = yours


def test_an_edited_prompt_forks_the_record_and_runs_live_from_there(ip, tmp_path):
    cell(ip, FIRST)
    cell(ip, SECOND)
    original = Path(agent().session.task_dir)
    restart(magics_mod.active_magics())

    assert "replayed" in cell(ip, FIRST)
    out = cell(ip, "now add 7 to it with python")

    assert "replayed" not in out
    forked = Path(agent().session.task_dir)
    assert forked != original and agent().turn == 2
    assert [t.prompt for t in load_index(tmp_path, forked.name).turns] == [FIRST, "now add 7 to it with python"]
    assert [t.prompt for t in load_index(tmp_path, original.name).turns] == [FIRST, SECOND]  # intact


def test_live_asks_the_model_even_for_a_recorded_turn(ip: Any) -> None:
    cell(ip, FIRST)
    requests = len(agent().records)
    restart(magics_mod.active_magics())

    out = cell(ip, FIRST, "--live")

    assert "replayed" not in out and len(agent().records) >= 1
    assert agent().turn == 1 and requests >= 1


def test_without_a_front_end_the_code_goes_into_one_next_input_with_a_notice(ip: Any) -> None:
    payloads: list[str] = []
    ip.set_next_input = lambda text, replace=False: payloads.append(text)  # type: ignore[method-assign]
    try:
        out = cell(ip, FIRST)
    finally:
        del ip.set_next_input
    assert len(payloads) == 1 and "17" in payloads[0]
    assert out.count("no notebook bridge") <= 1


def test_a_transcript_not_signed_by_this_user_is_rebuilt_from_the_record_never_shown(ip, tmp_path):
    live = cell(ip, FIRST)
    name = Path(agent().session.task_dir).name
    saved = tmp_path / ".nbagent" / "replay" / name / "1.json"
    forged = json.loads(saved.read_text())
    forged["bundle"]["text/html"] = '<img src=x onerror="window.__pwned=1">'
    forged["bundle"]["text/plain"] = "forged"
    saved.write_text(json.dumps(forged))
    restart(magics_mod.active_magics())

    again = cell(ip, FIRST)

    assert "forged" not in again and "onerror" not in again
    assert _transcript(again) == _transcript(live)  # rebuilt from the events, as it was
    assert UNSIGNED_LINE in again and UNSIGNED_LINE not in live  # never shown as this user's own record


def test_an_answer_never_replays_under_a_prompt_the_index_was_edited_to(ip, tmp_path):
    # The index mapping prompts to turns is a plain file; the transcript signs its own prompt.
    live = cell(ip, FIRST)
    name = Path(agent().session.task_dir).name
    index_file = tmp_path / ".nbagent" / "replay" / f"{name}.json"
    index = json.loads(index_file.read_text())
    spliced = "Is deploy.sh safe to run on production?"
    index["turns"][0]["prompt"] = spliced
    index_file.write_text(json.dumps(index))
    restart(magics_mod.active_magics())

    again = cell(ip, spliced)

    assert UNSIGNED_LINE in again and UNSIGNED_LINE not in live  # not shown as this user's own record
    restart(magics_mod.active_magics())
    index["turns"][0]["prompt"] = FIRST
    index_file.write_text(json.dumps(index))
    assert UNSIGNED_LINE not in cell(ip, FIRST)  # under its own prompt it is the user's, signed


def _line(ip: Any, code: str) -> str:
    ip.display_pub.outputs.clear()
    with capture_output() as cap:
        result = ip.run_cell(code)
    assert result.error_in_exec is None, result.error_in_exec
    shown = [o.data.get("text/plain", "") for o in cap.outputs]
    return "\n".join([cap.stdout, *shown, *(o["data"].get("text/plain", "") for o in ip.display_pub.outputs)])


def test_after_a_replay_status_and_history_describe_the_replayed_session(ip, monkeypatch):
    monkeypatch.setenv("JPY_SESSION_NAME", "analysis.ipynb")  # the notebook's own record (a copy's: test_replay_copy)
    cell(ip, FIRST)
    cell(ip, SECOND)
    recorded = agent().session.task_dir
    restart(magics_mod.active_magics())
    cell(ip, FIRST)  # one of the two recorded turns replayed

    status = _line(ip, "%agent status")
    history = _line(ip, "%agent history")

    assert "no session yet" not in status and "model " in status and str(recorded) in status
    assert "replaying session" in status and "1 turn(s) shown" in status
    assert agent().turn == 2 and len(agent().records) >= 2  # the record, loaded: no request was sent
    rows = [ln for ln in history.splitlines() if ln.strip()[:1].isdigit()]
    assert rows and all(ln.split()[0] == "1" for ln in rows)  # only the turn shown so far
    assert "replayed" in cell(ip, SECOND)  # loading it for status did not stop the replay


def test_the_no_key_notice_belongs_to_the_live_kernel_not_to_the_replay(ip):
    live = cell(ip, FIRST)
    assert "No ANTHROPIC_API_KEY" in live
    restart(magics_mod.active_magics())

    again = cell(ip, FIRST)

    assert "replayed" in again and "No ANTHROPIC_API_KEY" not in again


def _received_mcp_json(tmp_path: Path, *, trusted: bool = True) -> None:
    """A ``.mcp.json`` that came with the folder: its server would run a command (``trusted``:
    the user read it and ran ``%agent mcp trust``)."""
    from nbagent.tools.mcp.trust import trust_mcp_json

    server = {"command": "python", "args": ["-c", "open('server-ran', 'w').close()"]}
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {"planted": server}}))
    if trusted:
        trust_mcp_json(tmp_path)


def test_an_untrusted_mcp_json_runs_nothing_until_agent_mcp_trust(ip, tmp_path):
    _received_mcp_json(tmp_path, trusted=False)
    restart(magics_mod.active_magics())

    shown = _line(ip, "%agent mcp")
    asked = cell(ip, "a question, asked live")

    assert "not trusted" in shown and '"planted": {"command": "python"' in shown
    assert "none was started" in asked and agent().mcp is None
    assert "trusted" in _line(ip, "%agent mcp trust")
    _line(ip, "%agent reset")
    cell(ip, "another question, asked live")
    manager = agent().mcp
    assert manager is not None and manager.state("planted") != "pending"  # trusted: it starts


def test_a_replay_starts_no_mcp_server_of_the_folder_until_a_live_request(ip, tmp_path):
    cell(ip, FIRST)
    cell(ip, SECOND)
    name = Path(agent().session.task_dir).name
    (tmp_path / ".nbagent" / "replay" / name / "1.json").unlink()  # rebuilt from the record: a session loads
    _received_mcp_json(tmp_path)
    restart(magics_mod.active_magics())

    assert "replayed" in cell(ip, FIRST)
    _line(ip, "%agent status")

    manager = agent().mcp
    assert manager is not None and manager.state("planted") == "pending"  # the command was never started
    assert "replayed" not in cell(ip, "a new question, asked live")
    assert agent().mcp.state("planted") != "pending"  # the first live request starts it


def test_a_replayed_agent_retry_whose_turn_the_cell_above_showed_says_so_and_sends_nothing(ip):
    from nbagent.notebook.document.command_replay import RETRY_SHOWN_LINE
    from nbagent.providers.simulated import Fault

    cell(ip, FIRST)
    api = agent().simulated_api
    api.faults = {len(api.requests) + 1: Fault.auth()}  # 401: Cancel (nobody can click here)
    assert ip.run_cell(f"%%agent\n{SECOND}").error_in_exec is not None
    assert "done: end_turn" in _line(ip, "%agent retry")
    restart(magics_mod.active_magics())

    cell(ip, FIRST)
    original = cell(ip, SECOND)  # the folder's turn 2 is the retry's: no cell id tells them apart
    again = _line(ip, "%agent retry")

    assert "replayed: session" in original and "done: end_turn" in original
    assert RETRY_SHOWN_LINE.format(turn=2) in again and "nbagent · " not in again
    assert magics_mod.active_magics().current is None  # no session loaded: nothing could ask


def test_a_retried_cells_allow_still_holds_after_a_headless_run_all(ip):
    # The retry's record, which a headless replay of the failed cell shows, named no tool: the cell
    # then said its --allow python was not in its signed record, and python was no longer allowed.
    from nbagent.providers.simulated import Fault

    magics = magics_mod.active_magics()
    magics.allow = []
    cell(ip, FIRST, "--allow python")
    api = agent().simulated_api
    api.faults = {len(api.requests) + 1: Fault.auth()}
    assert ip.run_cell(f"%%agent --allow python\n{SECOND}").error_in_exec is not None
    assert "done: end_turn" in _line(ip, "%agent retry")
    restart(magics)
    cell(ip, FIRST, "--allow python")

    original = cell(ip, SECOND, "--allow python")

    assert "replayed: session" in original and "not carried" not in original
    cell(ip, "now multiply it by 2 with python")
    assert "python" in agent().config.allow


def test_agent_retry_after_a_replayed_failure_sends_nothing_and_says_how_to_ask_again(ip):
    from nbagent.providers.simulated import Fault

    cell(ip, FIRST)
    api = agent().simulated_api
    api.faults = {len(api.requests) + 1: Fault.auth()}
    assert ip.run_cell(f"%%agent\n{SECOND}").error_in_exec is not None
    restart(magics_mod.active_magics())
    cell(ip, FIRST)
    assert ip.run_cell(f"%%agent\n{SECOND}").error_in_exec is not None  # the failure, replayed: the cell fails

    with capture_output():
        result = ip.run_cell("%agent retry")

    assert "turn 2 was replayed as recorded" in str(result.error_in_exec) and "--live" in str(result.error_in_exec)
    assert magics_mod.active_magics().current is None


def test_a_settings_command_in_a_received_folder_starts_no_mcp_server(ip, tmp_path):
    # Checking the permission mode before the first prompt used to start the folder's commands.
    _received_mcp_json(tmp_path)
    restart(magics_mod.active_magics())
    for command in ("%agent permissions", "%agent permissions default", "%agent reset"):
        _line(ip, command)
        manager = agent().mcp
        assert manager is not None and manager.state("planted") == "pending", command
    assert not (tmp_path / "server-ran").exists()
    cell(ip, "a question, asked live")
    assert agent().mcp.state("planted") != "pending"  # the first live request starts it


def test_a_replayed_out_schema_cell_binds_the_recorded_answer_again(ip):
    # Notebook 05 under Restart & Run All: the replayed `--out city --schema City` cell left `city`
    # unset, so the next cell failed with NameError and Run All stopped there.
    ip.run_cell("import pydantic\nclass City(pydantic.BaseModel):\n    name: str\n    population: int")
    prompt = "'Paris' has 2100000 people. Give me the city and its population."
    cell(ip, prompt, "--out city --schema City")
    assert ip.user_ns["city"].population == 2100000
    restart(magics_mod.active_magics())
    del ip.user_ns["city"]

    replayed = cell(ip, prompt, "--out city --schema City")

    assert "replayed: session" in replayed
    assert type(ip.user_ns["city"]).__name__ == "City"
    assert ip.user_ns["city"].model_dump() == {"name": "Paris", "population": 2100000}


def test_a_replayed_out_cell_with_a_text_answer_binds_the_recorded_text_again(ip):
    # Restart & Run All left `answer` unset, so a cell below reading it failed with NameError.
    cell(ip, FIRST, "--out answer")
    live = ip.user_ns["answer"]
    assert isinstance(live, str) and live
    restart(magics_mod.active_magics())
    ip.user_ns.pop("answer", None)

    replayed = cell(ip, FIRST, "--out answer")

    assert "replayed: session" in replayed and "not set by a replay" not in replayed
    assert ip.user_ns["answer"] == live



def test_a_headless_replay_that_reaches_a_prompt_past_the_record_says_it_asks(ip, monkeypatch):
    # nbconvert --execute of notebook 04: its rollback lesson cut the last turn from the record, so
    # the next headless run replays up to there and then asks the model: never silently
    from nbagent.notebook.document import link as link_mod
    from nbagent.notebook.document import lookup as lookup_mod
    from nbagent.notebook.document.live_lines import PAST_RECORD_LINE

    for module in (link_mod, lookup_mod):
        monkeypatch.setattr(module, "in_kernel", lambda: True)  # a kernel that sends no cell ids
    cell(ip, FIRST)
    restart(magics_mod.active_magics())
    assert "replayed: session" in cell(ip, FIRST)

    out = cell(ip, SECOND)

    assert "replayed: session" not in out and PAST_RECORD_LINE in out
    assert out.index(PAST_RECORD_LINE) < out.index("(simulated model)")  # said before the answer


def test_a_headless_edited_first_cell_says_no_record_begins_with_it_not_that_there_is_no_record(ip, monkeypatch):
    # nbconvert --execute of notebook 05 with its first prompt edited ("'Lyon' has 520000 people"):
    # the line said "no .nbagent/ record beside the notebook", in a folder full of its records
    from nbagent.notebook.document import link as link_mod
    from nbagent.notebook.document import lookup as lookup_mod
    from nbagent.notebook.document.live_lines import NO_MATCH_LINE, NO_RECORD_LINE

    for module in (link_mod, lookup_mod):
        monkeypatch.setattr(module, "in_kernel", lambda: True)  # a kernel that sends no cell ids
    assert NO_RECORD_LINE in cell(ip, FIRST)  # a folder with no record yet: that line is true
    restart(magics_mod.active_magics())

    out = cell(ip, "what is 19 * 21? use python")

    assert NO_RECORD_LINE not in out and NO_MATCH_LINE in out
    assert out.index(NO_MATCH_LINE) < out.index("(simulated model)")  # said before the answer


def test_a_replayed_cells_allow_holds_when_its_session_goes_on_live(ip):
    # notebook 04: `%%agent --new --allow python` replayed, then the next cell asks live: python is
    # still allowed for that session, as it was when the notebook ran live
    magics = magics_mod.active_magics()
    magics.allow = []
    cell(ip, FIRST, "--allow python")
    restart(magics)
    assert "replayed: session" in cell(ip, FIRST, "--allow python")

    out = cell(ip, SECOND)

    assert "replayed: session" not in out and "python" in agent().config.allow
    assert "denied" not in out.lower()


def test_a_session_the_notebooks_code_made_and_asked_is_continued_live_never_replaced_by_a_record(ip):
    # notebook 05: `s = magics.new_session(...)`, `s.agent.run_sync(...)` three times, then an agent
    # cell and `%agent rollback 3`; its second headless run resumed the record of the first agent
    # cell instead, so the rollback cell failed ("no turn 3 to roll back to") and Run All stopped
    from nbagent.notebook.document.live_lines import OWN_SESSION_LINE

    code = "s = __import__('nbagent').notebook.magics.active_magics().new_session()\ns.agent.run_sync('what is 2 + 2?')"
    cell(ip, FIRST)
    ip.run_cell(code)
    cell(ip, SECOND)
    restart(magics_mod.active_magics())
    assert "replayed: session" in cell(ip, FIRST)
    ip.run_cell(code)  # the notebook's code asks the model itself, on every run

    out = cell(ip, SECOND)

    assert "replayed: session" not in out and OWN_SESSION_LINE.format(turns=1) in out
    assert magics_mod.active_magics().current is ip.user_ns["s"] and agent().turn == 2
    assert ip.run_cell("%agent rollback 1").error_in_exec is None


def test_headless_a_recorded_prompt_asked_after_a_live_turn_says_it_asks(ip, monkeypatch):
    # notebook 05's second headless run: once a cell went live, the cells after a session made in
    # code (plan mode, the hook) are new questions (rule 3), and now say so rather than ask silently
    from nbagent.notebook.document import link as link_mod
    from nbagent.notebook.document import lookup as lookup_mod
    from nbagent.notebook.document.live_lines import NEW_QUESTION_LINE

    for module in (link_mod, lookup_mod):
        monkeypatch.setattr(module, "in_kernel", lambda: True)
    code = "s = __import__('nbagent').notebook.magics.active_magics().new_session()"
    cell(ip, FIRST)
    ip.run_cell(code)
    cell(ip, SECOND)
    restart(magics_mod.active_magics())
    cell(ip, FIRST, "--live")
    ip.run_cell(code)

    out = cell(ip, SECOND)

    assert "replayed: session" not in out and NEW_QUESTION_LINE in out


def test_a_rollback_after_a_new_cell_replayed_another_session_never_undoes_the_one_status_loaded(ip, monkeypatch):
    monkeypatch.setenv("JPY_SESSION_NAME", "analysis.ipynb")
    cell(ip, FIRST)
    cell(ip, SECOND)
    first = Path(agent().session.task_dir).name
    cell(ip, "what is 5 * 5? use python", "--new")
    second = Path(agent().session.task_dir).name
    restart(magics_mod.active_magics())
    cell(ip, FIRST)
    cell(ip, SECOND)
    _line(ip, "%agent status")  # loads the first session (the replayed one so far)
    assert "replayed" in cell(ip, "what is 5 * 5? use python", "--new")

    status = _line(ip, "%agent status")
    rolled = _line(ip, "%agent rollback 0")

    assert second in status and first not in status  # the session the replay is in now
    assert "rolled back to the end of turn 0" in rolled and Path(agent().session.task_dir).name == second
    index = load_index(Path.cwd(), first)
    assert index is not None and [t.turn for t in index.turns] == [1, 2]  # the first session's record is whole


def test_nbagent_session_after_a_replay_is_the_replayed_session_not_an_empty_one_a_cell_made(ip, monkeypatch):
    monkeypatch.setenv("JPY_SESSION_NAME", "analysis.ipynb")
    cell(ip, "what is 4 * 4? use python", "--allow read_file")  # python is allowed by the fixture
    recorded = Path(agent().session.task_dir).name
    restart(magics_mod.active_magics())
    magics = magics_mod.active_magics()
    made = magics.new_session()  # as notebook 04's first cell
    assert "replayed" in cell(ip, "what is 4 * 4? use python", "--allow read_file")

    import nbagent

    assert Path(nbagent.session().agent.session.task_dir).name == recorded
    assert nbagent.session().turn == 1 and made.turn == 1  # the object the code holds reads it too
    assert "turns        1 " in _line(ip, "%agent status")


DENY_PYTHON_SESSION = (
    "from nbagent import Deny\n"
    "def no_python(call):\n"
    "    return Deny('policy: no python in this notebook') if call.name == 'python' else None\n"
    "s = __import__('nbagent').notebook.magics.active_magics().new_session(hooks={'pre_tool_use': no_python})")


@pytest.mark.parametrize("then", ["what is 6 * 7? use python", f"{FIRST} (edited)"])
def test_a_replay_goes_on_live_with_the_hook_of_the_session_the_notebooks_code_made(ip, monkeypatch, then):
    # notebook 05's shape with the session made above the agent cells: the turns it replays ran
    # with the deny hook, so the turn that goes on live past them (or forks at an edited prompt)
    # runs with it too. On the old code the record was resumed with the AgentMagics settings only,
    # and the model's python ran (attacker pass 8).
    monkeypatch.setenv("JPY_SESSION_NAME", "analysis.ipynb")
    ip.run_cell(DENY_PYTHON_SESSION)
    assert "policy: no python" in cell(ip, FIRST)
    restart(magics_mod.active_magics())
    ip.run_cell(DENY_PYTHON_SESSION)
    assert "replayed: session" in cell(ip, FIRST)

    out = cell(ip, then)

    assert "replayed: session" not in out and "policy: no python" in out
    assert agent().engine.hooks is ip.user_ns["s"].agent.engine.hooks


def _recorded_then_run_again(ip: Any, first_cell: str) -> Path:
    """A notebook whose first cell is ``first_cell`` (a session made in code, a setting) and whose
    agent cell asked FIRST live, then a fresh kernel that runs the first cell again; returns the
    recorded session's folder."""
    ip.run_cell(first_cell)
    cell(ip, FIRST)
    folder = agent().session.task_dir
    assert folder is not None  # recorded
    restart(magics_mod.active_magics())
    ip.run_cell(first_cell)
    return Path(folder)


def test_nbagent_session_after_a_replay_keeps_the_settings_of_the_session_a_cell_made(ip, monkeypatch):
    monkeypatch.setenv("JPY_SESSION_NAME", "analysis.ipynb")
    made = "s = __import__('nbagent').notebook.magics.active_magics().new_session(permission_mode='plan', deny=('shell',))"
    _recorded_then_run_again(ip, made)
    assert "replayed: session" in cell(ip, FIRST)

    import nbagent

    loaded = nbagent.session().agent
    assert loaded is ip.user_ns["s"].agent and loaded.turn == 1  # the code's own object reads the replayed session
    assert loaded.config.permission_mode == "plan" and loaded.config.deny == ("shell",)


def test_agent_permissions_plan_above_the_replayed_cells_holds_for_the_turn_that_goes_on_live(ip, monkeypatch):
    # the notebook's first cell is `%agent permissions plan`: on the old code the record was resumed in
    # `default` mode when Run All went past the replayed cells, and the model's python ran (attacker pass 8)
    monkeypatch.setenv("JPY_SESSION_NAME", "analysis.ipynb")
    _recorded_then_run_again(ip, "%agent permissions plan")
    assert "replayed: session" in cell(ip, FIRST)

    out = cell(ip, "what is 6 * 7? use python")

    assert "replayed: session" not in out and agent().config.permission_mode == "plan"
    assert "→ result: [result]\n    42" not in out


def test_a_session_a_cell_made_keeps_its_provider_when_the_replay_fills_it(ip, monkeypatch):
    # Its provider was the AgentMagics one after the replay: a session made with provider="simulated"
    # (or an endpoint) went on live through the real API, and notebook 03's faults, set on the code's
    # simulated API, were gone from the live request.
    monkeypatch.setenv("JPY_SESSION_NAME", "analysis.ipynb")
    made = "s = __import__('nbagent').notebook.magics.active_magics().new_session(provider='simulated')"
    _recorded_then_run_again(ip, made)
    api = ip.user_ns["s"].agent.simulated_api

    assert "replayed: session" in cell(ip, FIRST)

    assert ip.user_ns["s"].turn == 1 and ip.user_ns["s"].agent.simulated_api is api


def test_a_record_that_cannot_be_loaded_for_the_code_session_fails_no_replayed_cell(ip, monkeypatch):
    # Filling the code's session loads the record; a record another kernel holds (or a damaged one)
    # raised there, after the replay was shown, and failed the cell: Run All stopped.
    monkeypatch.setenv("JPY_SESSION_NAME", "analysis.ipynb")
    folder = _recorded_then_run_again(ip, "s = __import__('nbagent').notebook.magics.active_magics().new_session()")
    holder = Agent.resume(folder)  # another kernel going on from this record holds its folder
    try:
        out = cell(ip, FIRST)  # fails the test if the cell fails
    finally:
        holder.close()

    assert "replayed: session" in out and "could not be given the replayed record" in out
    assert ip.user_ns["s"].turn == 0  # as it was


def test_the_first_live_turn_after_a_replay_says_what_of_the_session_cost_was_spent_when_recorded(ip):
    """Restart & Run All, then a new prompt: the session's spend is the record's and this turn's
    (money spent is never un-spent), and the cell, ``%agent status`` and ``%agent cost`` say which
    part was spent before this kernel (it showed the whole record's spend with no word)."""
    cell(ip, FIRST)
    cell(ip, SECOND)
    recorded = agent().totals.spent_usd
    restart(magics_mod.active_magics())
    cell(ip, FIRST)
    cell(ip, SECOND)

    live = cell(ip, "and what is 3 * 3? use python")

    note = f"(${recorded:.4f} of it spent before this kernel, when the record's turns ran"
    done = next(line for line in live.splitlines() if line.startswith("■ done"))
    assert f"session spent ${agent().totals.spent_usd:.4f} {note})" in done and agent().totals.spent_usd > recorded
    for command in ("%agent status", "%agent cost"):
        with capture_output() as shown:
            ip.run_cell(command)
        assert f"{note})" in shown.stdout, command
    restart(magics_mod.active_magics())  # a session that never replayed says nothing of the kind
    assert "before this kernel" not in cell(ip, "what is 2 * 2? use python", "--new")
