"""The magics and %agent commands in an in-process IPython shell (no kernel needed).

The model is the offline simulated API; tools are allowed up front so no prompt waits for a click
(clicks are exercised on real kernels in test_magics_kernel.py).
"""

from __future__ import annotations

import copy
import hashlib
from typing import Any, Iterator

import pytest
from IPython.core.displaypub import CapturingDisplayPublisher
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output

from nbagent.engine.contracts.messages import history_problems
from nbagent.notebook import magics as magics_mod


@pytest.fixture
def ip(tmp_path, monkeypatch) -> Iterator[Any]:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    shell = InteractiveShell.instance()
    saved = shell.display_pub
    shell.display_pub = CapturingDisplayPublisher()
    shell.run_cell("%load_ext nbagent")
    magics_mod.active_magics().new_session(allow=("python", "read_file"))
    # A test's `%config AgentMagics.X` stays in the shared shell's config: every later test's
    # `%reload_ext nbagent` loaded it (a model without effort control, another test's task_root).
    config = copy.deepcopy(shell.config.get("AgentMagics"))
    try:
        yield shell
    finally:
        magics_mod.active_magics().mode = "python"
        shell.display_pub = saved
        shell.config["AgentMagics"] = config if config is not None else type(shell.config)()


def run(ip: Any, code: str) -> str:
    with capture_output() as cap:
        result = ip.run_cell(code)
    assert result.error_in_exec is None and result.error_before_exec is None, (result, cap.stdout)
    texts = [cap.stdout] + [o.data.get("text/plain", "") for o in cap.outputs]
    texts += [o["data"].get("text/plain", "") for o in ip.display_pub.outputs]
    return "\n".join(texts)


def fails(ip: Any, code: str) -> str:
    """The message of the UsageError that failed the cell (the cell must fail: Run All stops)."""
    from IPython.core.error import UsageError

    with capture_output():
        result = ip.run_cell(code)
    assert isinstance(result.error_in_exec, UsageError), result
    return str(result.error_in_exec)


def session() -> Any:
    return magics_mod.active_magics().session()


def test_agent_cell_runs_the_loop_and_continues_the_conversation(ip):
    out = run(ip, "%%agent\nWhat is 17 * 23?")
    assert "391" in out and "done: end_turn" in out
    run(ip, "%%agent\nWhat is 2 * 4?")
    s = session()
    assert s.turn == 2 and history_problems(s.agent.history) == []
    assert len(s.records) == 4 and s.turns_df()["request"].tolist() == [1, 2, 3, 4]


def test_saw_shows_exactly_what_the_simulated_api_received(ip):
    run(ip, "%%agent\nWhat is 5 * 5?")
    s = session()
    api = s.agent.simulated_api
    sent = s.saw(1)
    recorded = [r for r in api.requests if r.path.endswith("/v1/messages")]
    assert len(sent) == len(recorded) == 2
    for mine, theirs in zip(sent, recorded, strict=False):
        body = copy.deepcopy(theirs.body)
        # The provider adds prompt-cache breakpoints on the wire; everything else must be identical.
        for m in body["messages"]:
            if isinstance(m["content"], list):
                for b in m["content"]:
                    b.pop("cache_control", None)
        assert body["messages"] == mine.messages
        assert body["system"][0]["text"] == mine.system
    out = run(ip, "%agent saw 1")
    assert "=== request 1 (turn 1" in out and "What is 5 * 5?" in out


def test_status_history_cost_context_config_and_help(ip):
    assert run(ip, "%agent history").strip() == "no requests yet"  # not pandas' "Empty DataFrame"
    run(ip, "%%agent\nWhat is 3 * 3?")
    assert "requests 2" in run(ip, "%agent status")
    assert "stop reason" in run(ip, "%agent history")
    assert "cumulative cost (session)" in run(ip, "%agent history")  # a cell's table says (run)
    assert "spent $" in run(ip, "%agent cost")
    assert "cache hit" in run(ip, "%agent cost") and "per request (last 2)" in run(ip, "%agent cost")
    assert "first pair" in run(ip, "%agent context")
    assert "AgentMagics.model" in run(ip, "%agent config")
    assert "%agent status" in run(ip, "%agent help")
    assert "Unknown %agent command" in fails(ip, "%agent frobnicate")


def test_rollback_reset_save_and_load(ip, tmp_path):
    run(ip, "%%agent\nWhat is 1 + 1?")
    run(ip, "%%agent\nWhat is 2 + 2?")
    assert "rolled back to the end of turn 1" in run(ip, "%agent rollback 1")
    s = session()
    assert s.turn == 1 and len(s.records) == 2 and history_problems(s.agent.history) == []
    assert "usage" in fails(ip, "%agent rollback")
    folder = tmp_path / "saved"
    assert "saved" in run(ip, f"%agent save {folder}")
    assert sorted(p.name for p in folder.iterdir()) == [
        "api_conversation_history.json", "context_history.json", "requests.json", "sent_requests.json", "session.json",
        "turn_marks.json", "ui_messages.json"]
    run(ip, "%agent reset")
    assert session().turn == 0
    assert "loaded" in run(ip, f"%agent load {folder}")
    assert session().turn == 1 and len(session().agent.history) == 4
    run(ip, "%%agent --allow python\nWhat is 6 * 6?")
    assert session().turn == 2 and history_problems(session().agent.history) == []


def test_agent_rollback_restores_the_notes_file(ip):
    run(ip, "%%agent --notes 500\nWhat is 1 + 1?")
    notes_md = session().agent.session.task_dir / "notes.md"
    for text, prompt in (("first", "What is 2 + 2?"), ("second", "What is 3 + 3?")):
        notes_md.write_text(text)  # as the agent's notes tool leaves them between two turns
        run(ip, f"%%agent\n{prompt}")
    assert "rolled back to the end of turn 1" in run(ip, "%agent rollback 1")
    assert notes_md.read_text() == "first"  # as turn 2 began
    assert "notes        on, bound 500 characters; 5 used" in run(ip, "%agent status")


def test_chat_mode_makes_plain_cells_prompts(ip):
    assert "chat mode" in run(ip, "%agent mode chat")
    out = run(ip, "What is 9 * 9?")
    assert "81" in out
    run(ip, "%%python\nchat_mode_value = 40 + 2")
    assert ip.user_ns["chat_mode_value"] == 42
    run(ip, "%agent mode python")
    run(ip, "plain_value = 1")
    assert ip.user_ns["plain_value"] == 1


def test_chat_mode_runs_the_agents_code_cells_as_code(ip, monkeypatch):
    # Restart & Run All of a chat-mode notebook: the cells the agent's python calls became carry
    # its mark (JupyterLab sends the metadata); sent as prompts, each asked the model again and was
    # turned into an agent cell, with one more code cell below it on every Run All.
    from nbagent.notebook.document import embedded

    run(ip, "%agent mode chat")
    sent = len(session().agent.sent)
    for kind in ("code", "new"):  # a python call's cell; a cell the model inserted
        monkeypatch.setattr(embedded, "executing_metadata", lambda k=kind: {"nbagent": {"kind": k, "turn": 1}})
        run(ip, f"made_{kind} = 6 * 7")
        assert ip.user_ns[f"made_{kind}"] == 42
    assert len(session().agent.sent) == sent  # nothing asked
    monkeypatch.setattr(embedded, "executing_metadata", lambda: {"nbagent": {"kind": "agent", "turn": 1}})
    assert "81" in run(ip, "What is 9 * 9?")  # a chat prompt's own cell stays a prompt
    # One of the agent's failed attempts, as it made it, fails as code; one the user typed a
    # question over is a prompt.
    # Edited into other code IPython runs: magics, shell commands, help and top-level await too.
    sent = len(session().agent.sent)
    for edited in ("%time made_magic = 1", "!true", "made_code?", "await asyncio.sleep(0)"):
        monkeypatch.setattr(embedded, "executing_metadata", lambda: {"nbagent": {"kind": "code", "turn": 1}})
        with capture_output():
            ip.run_cell("import asyncio\nmade_code = 1")
            ip.run_cell(edited)
    assert len(session().agent.sent) == sent and ip.user_ns.get("made_magic") == 1  # ran as code, nothing asked
    broken = "sales.groupby(('region')"
    made = {"source_sha256": hashlib.sha256(broken.encode()).hexdigest()}
    monkeypatch.setattr(embedded, "executing_metadata", lambda: {"nbagent": {"kind": "code", "made": made}})
    with capture_output():
        assert isinstance(ip.run_cell(broken).error_before_exec, SyntaxError)  # ran as code
    assert "81" in run(ip, "What is 9 * 9?")


def test_chat_mode_leaves_a_tools_code_as_code(ip):
    """An MCP client's run_code (and notebook_run) goes through the executor's transform_cell: in
    chat mode it became a question to nbagent's model (review of this session)."""
    import asyncio

    from nbagent.notebook.executor import ShellExecutor

    run(ip, "%agent mode chat")
    sent = len(session().agent.sent)
    try:
        result = asyncio.run(ShellExecutor(ip).execute("client_value = 6 * 7\nclient_value"))
    finally:
        run(ip, "%agent mode python")
    assert result.error is None and ip.user_ns["client_value"] == 42
    assert len(session().agent.sent) == sent  # nothing asked


def test_insert_code_puts_the_last_python_code_in_the_next_cell(ip: Any) -> None:
    payloads: list[Any] = []
    ip.set_next_input = lambda text, replace=False: payloads.append(text)  # type: ignore[method-assign]
    run(ip, "%%agent --insert-code\nWhat is 12 * 3?")
    assert payloads and "12 * 3" in payloads[-1]


def test_the_agent_sees_user_variables(ip):
    run(ip, "import pandas as pd\nsales = pd.DataFrame({'x': [1, 2, 3]})")
    run(ip, "%%agent\nWhat is in `sales`?")
    system = session().agent.sent[-1].system
    assert "sales" not in system  # facts travel in the prompt, so the cached prefix survives them
    prompt = session().agent.history[0]["content"]
    assert any("sales: DataFrame (shape (3, 1)" in b.get("text", "") for b in prompt)


def test_empty_prompt_and_bad_options_fail_the_cell_with_a_usage_error(ip):
    assert "needs a prompt" in fails(ip, "%%agent\n   ")
    assert "invalid int" in fails(ip, "%%agent --max-turns notanumber\nhi")
    assert "--bogus" in fails(ip, "%%agent --bogus\nhi")


def _fails_with(ip: Any, code: str) -> tuple[BaseException, str]:
    """The exception that failed the cell, and what the cell showed for it."""
    with capture_output() as cap:
        result = ip.run_cell(code)
    assert result.error_in_exec is not None, result
    return result.error_in_exec, cap.stdout + cap.stderr


def test_a_failed_run_fails_its_cell_with_one_readable_line(ip):
    from nbagent.notebook.outcome import AgentRunFailed
    from nbagent.providers.simulated import Fault

    api = session().agent.simulated_api
    api.faults = {len(api.requests) + 1: Fault.auth()}  # 401: not retried; the card asks
    clicker = _press_cancel_soon()
    exc, shown = _fails_with(ip, "%%agent\nWhat is 4 * 5?")
    clicker.join(5)
    assert isinstance(exc, AgentRunFailed) and "auth" in str(exc).lower()
    assert exc._render_traceback_() == [f"AgentRunFailed: {exc}"]
    assert "Traceback" not in shown
    assert session().events[-1].reason == "error"


def test_an_abort_ends_the_cell_as_an_interrupt(ip):
    from nbagent.engine.contracts.events import Done
    from nbagent.notebook.outcome import INTERRUPTED_LINE, AgentInterrupted, check_done

    with pytest.raises(AgentInterrupted) as info:
        check_done(Done(reason="aborted"))
    assert isinstance(info.value, KeyboardInterrupt) and type(info.value).__name__ == "KeyboardInterrupt"
    assert info.value._render_traceback_() == [INTERRUPTED_LINE]
    for ok in ("end_turn", "max_requests", "max_budget", "refusal"):
        check_done(Done(reason=ok))  # limits and refusals are answers, not failures


def test_a_refusal_to_start_is_one_line(ip, monkeypatch):
    from nbagent.notebook.outcome import AgentRunRefused

    exc, shown = _fails_with(ip, "%%agent --anthropic\nhi")
    assert isinstance(exc, AgentRunRefused) and "ANTHROPIC_API_KEY" in str(exc)
    assert "Traceback" not in shown


def _press_cancel_soon() -> Any:
    """The user's click on the failure card's Cancel, from another thread, once it is shown."""
    import threading
    import time

    def press_cancel() -> None:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            view = session().view
            try:
                if view is not None and view.failure.cancel() is not False:
                    return
            except LookupError:
                pass
            time.sleep(0.05)

    clicker = threading.Thread(target=press_cancel, daemon=True)
    clicker.start()
    return clicker


def test_retry_reruns_a_failed_prompt_from_where_its_turn_began(ip):
    from nbagent.providers.simulated import Fault

    run(ip, "%%agent\nWhat is 1 + 2?")
    s = session()
    s.agent.simulated_api.faults = {len(s.agent.simulated_api.requests) + 1: Fault.auth()}
    clicker = _press_cancel_soon()
    _exc, _shown = _fails_with(ip, "%%agent\nWhat is 4 * 5?")
    clicker.join(5)
    assert session().events[-1].reason == "error"
    out = run(ip, "%agent retry")
    assert "20" in out and "done: end_turn" in out
    s = session()
    assert s.turn == 2 and history_problems(s.agent.history) == []
    prompts = [b["text"] for m in s.agent.history if m["role"] == "user" and isinstance(m["content"], list)
               for b in m["content"] if b.get("type") == "text"]
    assert prompts.count("What is 4 * 5?") == 1  # the failed attempt was rolled back, not repeated


def test_per_prompt_limits_do_not_stick_and_help_is_not_a_prompt(ip):
    out = run(ip, "%%agent --max-turns 1\nWhat is 2 * 21?")
    assert "done: max_requests" in out
    assert session().agent.config.max_requests == 25
    out = run(ip, "%%agent\nWhat is 2 * 22?")
    assert "done: end_turn" in out
    # `%%agent?` is IPython's help, not an empty prompt; consoles must not submit a bare %%agent.
    from nbagent.notebook.cell_transformer import agent_cell_transformer
    assert agent_cell_transformer(["%%agent?\n"]) == ["%%agent?\n"]
    assert agent_cell_transformer(["%%agent_notes\n", "x\n"]) == ["%%agent_notes\n", "x\n"]
    assert ip.input_transformer_manager.check_complete("%%agent\n")[0] == "incomplete"


def test_pasted_prompts_and_indentation_reach_the_model_verbatim(ip):
    run(ip, "%%agent\n>>> x = 1\n    indented line\nwhy?")
    sent = session().agent.sent[-1].messages
    text = [b["text"] for b in sent[0]["content"] if b.get("type") == "text" and "kernel-state" not in b["text"]][-1]
    assert text == ">>> x = 1\n    indented line\nwhy?"


def test_a_variable_whose_shape_raises_does_not_break_the_agent(ip):
    run(ip, "class Closed:\n    @property\n    def shape(self):\n        raise ValueError('closed dataset')\nbroken = Closed()")
    assert "done: end_turn" in run(ip, "%%agent\nWhat is 3 + 4?")


def test_a_model_chosen_in_a_cell_is_what_every_view_reports(ip):
    run(ip, "%%agent --model claude-haiku-4-5\nWhat is 2 + 2?")
    s = session()
    assert s.agent.config.model == "claude-haiku-4-5" and "claude-haiku-4-5" in repr(s.agent)
    assert "claude-haiku-4-5" in run(ip, "%agent config") and "claude-haiku-4-5" in run(ip, "%agent status")
    assert s.records[-1].model == "claude-haiku-4-5"


def test_a_failed_save_fails_its_cell_and_breaks_nothing(ip, tmp_path):
    run(ip, "%%agent\nWhat is 2 + 2?")
    assert "nbagent:" in fails(ip, "%agent save /proc/nope/session")
    before = len(session().agent.history)
    run(ip, "%%agent\nAnd 3 + 3?")
    assert len(session().agent.history) > before and history_problems(session().agent.history) == []
    assert session().turn == 2 and session().events[-1].reason == "end_turn"


def test_permissions_command_and_cell_option_set_the_mode(ip):
    assert "permission mode default" in run(ip, "%agent permissions")
    assert "permission mode plan" in run(ip, "%agent permissions plan")
    assert session().agent.config.permission_mode == "plan"
    assert "every tool runs without asking" in run(ip, "%agent permissions bypass")
    assert "usage: %agent permissions [default|accept_edits|plan|bypass]" in fails(ip, "%agent permissions yolo")
    run(ip, "%%agent --permissions accept_edits\nWhat is 2 * 3?")
    assert session().agent.config.permission_mode == "accept_edits"
    assert "permissions  accept_edits" in run(ip, "%agent status")


def test_plan_mode_in_a_cell_denies_the_python_tool(ip):
    out = run(ip, "%%agent --permissions plan\nWhat is 6 * 7?")
    assert "plan mode" in out
    assert [d.tool for d in session().agent.denials] == ["python"]


def test_bypass_cannot_be_a_configured_default(ip):
    from traitlets import TraitError

    with pytest.raises(TraitError):
        magics_mod.active_magics().permission_mode = "bypass"


def _script(replies):
    from nbagent.providers.simulated import SimulatedAPI

    api = SimulatedAPI(replies)
    magics_mod.active_magics().new_session(provider=None)
    sess = magics_mod.active_magics().current
    from nbagent.providers.anthropic import simulated_provider

    sess.agent.engine.provider = simulated_provider(api)
    return api


def test_out_binds_the_text_and_out_with_schema_binds_the_validated_object(ip):
    from nbagent.providers.simulated import text_reply

    _script([text_reply("forty-two")])
    run(ip, "%%agent --out answer\nWhat is the answer?")
    assert ip.user_ns["answer"] == "forty-two"
    run(ip, "import pydantic\nclass City(pydantic.BaseModel):\n    name: str\n    population: int")
    _script([text_reply('{"name": "Lyon", "population": 5}')])
    run(ip, "%%agent --out city --schema City\nA city?")
    assert ip.user_ns["city"] == ip.user_ns["City"](name="Lyon", population=5)
    assert "--schema Nope: no such name" in fails(ip, "%%agent --out c --schema Nope\nA city?")


def test_the_last_error_and_recent_outputs_reach_the_model(ip):
    with capture_output():
        ip.run_cell("scores = {'a': 1}")
        ip.run_cell("scores['b']")  # KeyError
        ip.run_cell("41 + 1")  # Out[n] = 42
    run(ip, "%%agent\nWhy did my cell fail?")
    sent = "\n".join(b.get("text", "") for m in session().agent.sent[-1].messages
                     for b in m["content"] if isinstance(m["content"], list) and b.get("type") == "text")
    assert "raised KeyError: 'b'" in sent and "scores['b']" in sent
    assert "Out[" in sent and ": 42" in sent


def test_agent_fix_sends_the_traceback_and_inserts_the_corrected_cell(ip: Any) -> None:
    from nbagent.providers.simulated import ScriptedResponder, text_reply, tool_reply

    with capture_output():
        ip.run_cell("prices = {'apple': 1.5}")
        ip.run_cell("prices['pear'] * 2")  # KeyError
    api = session().agent.simulated_api
    api.responder = ScriptedResponder([
        tool_reply("python", {"code": "prices.get('pear', 0) * 2"}, text="There is no 'pear' key."),
        text_reply("Use .get with a default:\n```python\nprices.get('pear', 0) * 2\n```"),
    ])
    payloads: list[str] = []
    ip.set_next_input = lambda text, replace=False: payloads.append(text)  # type: ignore[method-assign]
    out = run(ip, "%agent fix --insert-code")
    assert "done: end_turn" in out
    first = api.requests[-2].body["messages"][-1]["content"]
    assert any("raised KeyError: 'pear'" in b.get("text", "") for b in first if b.get("type") == "text")
    assert "raised KeyError" in run(ip, "%agent saw")
    assert payloads == ["prices.get('pear', 0) * 2"]


def test_agent_fix_without_a_failed_cell_is_a_usage_error(ip):
    magics_mod.active_magics().last_error.text = None
    assert "No failed cell to fix" in fails(ip, "%agent fix")


@pytest.mark.parametrize("option, expected", [
    ("--max-budget -1", "positive amount of USD"),
    ("--max-budget 0", "positive amount of USD"),
    ("--window 10", "between 2,000 and 10,000,000 tokens"),
    ("--max-requests 0", "at least 1"),
    ("--max-turns abc", "invalid int value: 'abc'"),
    ("--notes -1", "0 (off) to 100,000, got -1"),
    ("--notes 200000", "0 (off) to 100,000, got 200000"),
    ("--notes many", "invalid int value: 'many'"),
])
def test_out_of_range_options_are_refused_with_the_allowed_range(ip, option, expected):
    before = len(session().agent.history)
    assert expected in fails(ip, f"%%agent {option}\nhi")
    assert len(session().agent.history) == before  # nothing was sent, nothing half-changed


def test_history_on_a_fresh_kernel_says_no_requests_yet_and_does_not_fail(ip):
    # A fresh kernel: the extension loaded, no %%agent cell run yet, so no session at all.
    magics_mod.active_magics().current = None
    assert run(ip, "%agent history").strip() == "no requests yet"


def test_allow_given_twice_allows_both_tools(ip):
    """``--allow python --allow read_file`` allows both, as ``--allow python read_file`` does (it kept
    the last one only: the python call asked, or was denied where nobody could answer)."""
    magics_mod.active_magics().new_session(allow=())
    out = run(ip, "%%agent --allow python --allow read_file\nWhat is 2 * 3?")
    assert set(session().agent.config.allow) == {"python", "read_file"}
    assert "denied" not in out and "6" in out


def test_a_failed_agent_command_is_not_the_users_failed_cell(ip):
    """``%agent fix`` with nothing to fix fails; a second ``%agent fix`` used to ask the model to fix
    the first (billed, its traceback through nbagent sent), and every later prompt reported it as
    the user's last error. The user's own failure before it stays the one to fix."""
    magics_mod.active_magics().last_error.text = None
    assert "No failed cell to fix" in fails(ip, "%agent fix")
    run(ip, "x = 1")
    assert "No failed cell to fix" in fails(ip, "%agent fix")
    with capture_output():
        assert ip.run_cell("{'apple': 1}['pear']").error_in_exec is not None
    with capture_output():
        assert ip.run_cell("%agent rollback 99").error_in_exec is not None
        assert ip.run_cell("get_ipython().run_line_magic('agent', 'rollback 99')").error_in_exec is not None
    last = magics_mod.active_magics().last_error.text or ""
    assert "raised KeyError: 'pear'" in last and "rollback" not in last


def test_a_model_that_does_not_exist_is_named_in_the_next_cells_failure(ip):
    """A cell's --model holds for later prompts: after ``--model no-such-model`` the next cell, with no
    --model of its own, fails too. Its line used to say "Fix the cause and run %agent retry, or run
    the cell again", which both ask for the same model again; it names the model and --model."""
    from nbagent.notebook.outcome import AgentRunFailed

    for code in ("%%agent --model no-such-model\nWhat is 2 * 3?", "%%agent\nWhat is 4 * 5?"):
        exc, _shown = _fails_with(ip, code)
        assert isinstance(exc, AgentRunFailed) and "not_found" in str(exc)
        assert "The session's model is 'no-such-model' (a cell's --model holds for the later prompts too)" in str(exc)
        assert "Fix the cause and run %agent retry" not in str(exc)
    exc, _shown = _fails_with(ip, "%agent retry")
    assert "'no-such-model'" in str(exc)
    run(ip, "%%agent --model claude-sonnet-5-5\nWhat is 6 * 7?")  # the way out the line names


def test_a_key_the_agents_code_displays_is_redacted_in_the_run_shown_and_saved(ip: Any) -> None:
    """The python tool's displays (a DataFrame's HTML table) reach the card through the executor's
    hook, which magics wires to the view: redacted there (they were shown and saved as displayed)."""
    from nbagent.providers.simulated import ScriptedResponder, text_reply, tool_reply

    key = "sk-ant-api03-" + "Qw7Lm3Np5Rt8Vy2Kb6Hd4Zx9" * 4
    with capture_output():
        ip.run_cell(f"import pandas as pd\ncreds = pd.DataFrame({{'service': ['api'], 'secret': [{key!r}]}})")
    api = session().agent.simulated_api
    api.responder = ScriptedResponder([tool_reply("python", {"code": "display(creds)"}), text_reply("shown")])
    ip.display_pub.outputs.clear()
    out = run(ip, "%%agent\nShow me creds")
    assert "done: end_turn" in out
    shown = out.split("[output]", 1)[1]  # the card's output: the displayed table
    assert "[redacted]" in shown.split("shown", 1)[0] and key[:20] not in out
