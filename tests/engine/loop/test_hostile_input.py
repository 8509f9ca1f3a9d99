"""Issue 12: bad input and hostile resources never crash the loop, lose data or grow without bound.

One regression test (or a few) per finding D1-D15, each failing on the code before the issue: the
real loop against the simulated Messages API through the real SDK, with a task folder.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from nbagent.engine.contracts.errors import CorruptFileError, ErrorKind, as_api_error, is_auto_retryable
from nbagent.engine.contracts.events import Notice, ToolResult
from nbagent.engine.contracts.messages import history_problems, tool_uses
from nbagent.engine.state.session import Session
from nbagent.engine.state.store import HISTORY_FILE, MARKS_FILE, REQUESTS_FILE, SESSION_FILE, UI_FILE, SessionStore
from nbagent.providers.simulated import SimulatedAPI, text_reply, tool_reply
from nbagent.tools.executor import NamespaceExecutor
from nbagent.tools.files import ReadFile
from nbagent.tools.python import Python
from nbagent.tools.shell import Shell
from tests.engine.loop.test_query_support import assert_persisted_valid, done_of, make_engine, run

SECRET = "sk-ant-test-0123456789abcdefghijklmnop"


def scripted(*replies: Any) -> SimulatedAPI:
    """A simulated API answering prompts with ``replies`` in order, then "Done." for good."""
    queue = list(replies)
    return SimulatedAPI(lambda body: queue.pop(0) if queue else text_reply("Done."))


def folder_text(task: Path) -> str:
    return "".join(p.read_text(encoding="utf-8") for p in task.iterdir() if p.is_file())


# ----- D1: lone surrogates, persistence failures, client-side errors -------------------------


async def test_a_lone_surrogate_in_tool_output_is_replaced_and_the_result_survives_a_resume(tmp_path: Path) -> None:
    api = scripted(tool_reply("python", {"code": "print('report-\\udcff.csv')"}))
    engine = make_engine(api, tmp_path, tools=[Python()], allow=("python",))
    ev = await run(engine, "list it")
    assert done_of(ev).reason == "end_turn"
    assert any(isinstance(e, Notice) and "U+FFFD" in e.message for e in ev)
    result = next(e for e in ev if isinstance(e, ToolResult))
    assert "report-\ufffd.csv" in result.content
    assert_persisted_valid(tmp_path / "task", engine)
    engine.session.close()
    resumed = Session.load(tmp_path / "task")
    assert "Not run" not in json.dumps(resumed.history)


async def test_a_prompt_with_a_lone_surrogate_runs_and_every_later_prompt_too(tmp_path: Path) -> None:
    engine = make_engine(scripted(), tmp_path)
    assert done_of(await run(engine, "what is \udcff?")).reason == "end_turn"
    assert done_of(await run(engine, "and now?")).reason == "end_turn"
    assert_persisted_valid(tmp_path / "task", engine)


async def test_a_failed_save_ends_the_run_with_an_error_keeps_history_and_is_retried(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    engine = make_engine(scripted(), tmp_path)

    def disk_full(*args: Any) -> None:
        raise OSError(28, "No space")

    with monkeypatch.context() as m:  # the history's appends and the writes of every file fail
        m.setattr(SessionStore, "save_history", disk_full)
        m.setattr(SessionStore, "write_all", disk_full)
        done = done_of(await run(engine, "hello"))
    assert done.reason == "error" and done.error is not None
    assert "No space" in done.error and "kept in memory" in done.error
    assert len(engine.session.history) == 2
    assert done_of(await run(engine, "again")).reason == "end_turn"
    assert_persisted_valid(tmp_path / "task", engine)
    assert len(SessionStore(tmp_path / "task").load().history) == 4


def test_client_side_errors_are_never_retried() -> None:
    err = as_api_error(UnicodeEncodeError("utf-8", "\udcff", 0, 1, "surrogates not allowed"))
    assert err.kind is ErrorKind.INVALID_REQUEST and not is_auto_retryable(err.kind)
    assert "client-side" in err.message


# ----- D3: bounded capture and storage -----------------------------------------------------


async def test_huge_python_output_is_captured_displayed_and_saved_bounded(tmp_path: Path) -> None:
    code = "for _ in range(200):\n    print('x' * 50_000)"  # 10 MB
    api = scripted(tool_reply("python", {"code": code}))
    engine = make_engine(api, tmp_path, tools=[Python()], allow=("python",), tool_capture_limit=100_000)
    ev = await run(engine, "print a lot")
    result = next(e for e in ev if isinstance(e, ToolResult))
    assert len(result.display or "") <= 100_000 and "not captured" in (result.display or "")
    assert (tmp_path / "task" / UI_FILE).stat().st_size < 300_000


async def test_the_executor_keeps_head_and_tail_and_states_what_it_dropped() -> None:
    result = await NamespaceExecutor(capture_limit=1000).execute("print('a' * 5000 + 'END')")
    assert len(result.stdout) < 1100 and result.stdout.startswith("a") and "END" in result.stdout
    assert "characters of output not captured" in result.stdout


# ----- D4: read_file on a FIFO ------------------------------------------------------------------


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs mkfifo")
async def test_read_file_refuses_a_fifo_at_once(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    api = scripted(tool_reply("read_file", {"path": "pipe"}))
    engine = make_engine(api, tmp_path, tools=[ReadFile()])
    started = time.monotonic()
    ev = await asyncio.wait_for(run(engine, "read the pipe"), 10)
    result = next(e for e in ev if isinstance(e, ToolResult))
    assert result.is_error and "not a regular file (a named pipe)" in result.content
    assert time.monotonic() - started < 5


# ----- D7: a prompt that cannot fit ---------------------------------------------------------------


async def test_a_prompt_larger_than_the_window_is_refused_and_the_next_one_works(tmp_path: Path) -> None:
    api = SimulatedAPI(lambda body: text_reply("ok"), context_window=50_000)
    engine = make_engine(api, tmp_path, context_window=50_000)
    done = done_of(await run(engine, "word " * 60_000))
    assert done.reason == "error" and done.error is not None
    assert "tokens" in done.error and "50,000" in done.error
    assert engine.session.history == [] and list(api.requests) == []
    assert done_of(await run(engine, "a short one")).reason == "end_turn"
    assert len(engine.session.history) == 2


# ----- D8-D10: task files validated on load ---------------------------------------------------


async def saved_folder(tmp_path: Path) -> Path:
    engine = make_engine(scripted(tool_reply("add", {"a": 1, "b": 2})), tmp_path)
    await run(engine, "add")
    engine.session.close()
    return tmp_path / "task"


def edit_json(path: Path, change: Any) -> bytes:
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(json.dumps(data), encoding="utf-8")
    return path.read_bytes()


@pytest.mark.parametrize("name, change, field", [
    (REQUESTS_FILE, lambda r: r[0].__setitem__("cost_usd", "0.01"), "0.cost_usd"),
    (REQUESTS_FILE, lambda r: r[0]["usage"].__setitem__("input_tokens", "12"), "0.usage.input_tokens"),
    (MARKS_FILE, lambda m: m[0].__setitem__("history_len", "four"), "0.history_len"),
])
async def test_wrong_typed_session_fields_are_refused_naming_file_and_field(
        tmp_path: Path, name: str, change: Any, field: str) -> None:
    task = await saved_folder(tmp_path)
    before = edit_json(task / name, change)
    with pytest.raises(CorruptFileError, match=rf"{name.replace('.', '[.]')}.*{field.replace('.', '[.]')}"):
        Session.load(task)
    assert (task / name).read_bytes() == before


@pytest.mark.parametrize("text", [None, 5, "", "  "])
async def test_bad_text_blocks_in_history_are_refused_naming_the_file(tmp_path: Path, text: Any) -> None:
    task = await saved_folder(tmp_path)
    edit_json(task / HISTORY_FILE, lambda h: h[0]["content"][0].__setitem__("text", text))
    with pytest.raises(CorruptFileError, match="api_conversation_history.json.*text"):
        Session.load(task)


@pytest.mark.parametrize("name", [HISTORY_FILE, UI_FILE, SESSION_FILE, REQUESTS_FILE, MARKS_FILE, "context_history.json"])
@pytest.mark.usefixtures("collections_keep_stack_left")
async def test_deeply_nested_json_in_any_task_file_is_a_corrupt_file_error(tmp_path: Path, name: str) -> None:
    task = await saved_folder(tmp_path)
    (task / name).write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    with pytest.raises(CorruptFileError, match=name.replace(".", "[.]")):
        Session.load(task)


@pytest.mark.parametrize("name", [HISTORY_FILE, UI_FILE, REQUESTS_FILE, MARKS_FILE])
async def test_a_torn_log_with_a_deeply_nested_entry_is_still_a_corrupt_file_error(tmp_path: Path, name: str) -> None:
    task = await saved_folder(tmp_path)
    deep = json.dumps(nested(300))  # parses, but deeper than any task file nbagent writes
    (task / name).write_text(f"[\n{deep},\n{{\"torn", encoding="utf-8")
    with pytest.raises(CorruptFileError, match=rf"{name.replace('.', '[.]')}.*nested deeper"):
        Session.load(task)


# ----- D11, D12: hostile tool calls ------------------------------------------------------------


def nested(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(depth):
        value = {"a": value}
    return value


@pytest.mark.usefixtures("collections_keep_stack_left")
async def test_a_tool_input_nested_500_levels_is_answered_with_an_error_and_saved(tmp_path: Path) -> None:
    api = scripted(tool_reply("echo", {"text": "x", "deep": nested(500)}))
    engine = make_engine(api, tmp_path)
    ev = await run(engine, "go deep")
    assert done_of(ev).reason == "end_turn"
    result = next(e for e in ev if isinstance(e, ToolResult))
    assert result.is_error and "nested deeper" in result.content
    assert_persisted_valid(tmp_path / "task", engine)


async def test_a_reused_tool_use_id_is_renamed_answered_with_an_error_and_the_folder_loads(tmp_path: Path) -> None:
    api = scripted(tool_reply("add", {"a": 1, "b": 2}, id="toolu_same"), text_reply("3"),
                   tool_reply("add", {"a": 2, "b": 2}, id="toolu_same"))
    engine = make_engine(api, tmp_path)
    await run(engine, "first")
    ev = await run(engine, "second")
    result = [e for e in ev if isinstance(e, ToolResult)][0]
    assert result.is_error and "already used" in result.content
    ids = [u["id"] for m in engine.session.history if m["role"] == "assistant" for u in tool_uses(m)]
    assert ids == ["toolu_same", "toolu_same_dup2"]
    engine.session.close()
    assert history_problems(Session.load(tmp_path / "task").history) == []


# ----- D14: the API key ----------------------------------------------------------------------------


async def test_the_api_key_never_reaches_the_model_transcript_or_disk(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    api = scripted(tool_reply([("shell", {"command": "env"}),
                               ("python", {"code": "import os; print(dict(os.environ))"})]))
    engine = make_engine(api, tmp_path, tools=[Shell(), Python()], shell=True, allow=("shell", "python"))
    ev = await run(engine, "show the environment")
    results = [e for e in ev if isinstance(e, ToolResult)]
    assert "ANTHROPIC_API_KEY" not in results[0].content  # not in the child's environment at all
    assert SECRET not in results[1].content and "[redacted]" in results[1].content
    assert SECRET not in json.dumps([r.body for r in api.requests])
    assert SECRET not in folder_text(tmp_path / "task")


async def test_a_secret_given_to_the_engine_and_a_listed_variable_are_redacted(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_TOKEN", "token-value-12345")
    code = f"print('{SECRET}', 'token-value-12345')"
    engine = make_engine(scripted(tool_reply("python", {"code": code})), tmp_path, tools=[Python()],
                         allow=("python",), secret_env=("MY_TOKEN",))
    engine._secrets = (SECRET,)  # what Agent(api_key=...) passes as ``secrets=``
    ev = await run(engine, "print")
    assert next(e for e in ev if isinstance(e, ToolResult)).content == "[redacted] [redacted]"


# ----- D15: crash consistency ------------------------------------------------------------------


async def test_the_request_record_is_written_before_the_history_it_describes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    order: list[str] = []

    def recording(name: str) -> Callable[..., None]:
        real = getattr(SessionStore, name)

        def save(self: SessionStore, *args: object, **kwargs: object) -> None:
            order.append(name)
            real(self, *args, **kwargs)
        return save

    for name in ("save_records", "save_history"):
        monkeypatch.setattr(SessionStore, name, recording(name))
    engine = make_engine(scripted(), tmp_path)
    order.clear()
    await run(engine, "hi")
    reply_write = order.index("save_history", order.index("save_history") + 1)  # prompt, then reply
    assert "save_records" in order[order.index("save_history") + 1:reply_write]


async def test_stale_temp_files_are_removed_and_leading_marks_trimmed_on_open(tmp_path: Path) -> None:
    task = await saved_folder(tmp_path)
    (task / f".{HISTORY_FILE}.abc123.tmp").write_text("half", encoding="utf-8")
    edit_json(task / MARKS_FILE, lambda m: m.append({**m[0], "turn": 2, "history_len": 99}))
    session = Session.load(task)
    assert not list(task.glob(".*.tmp")) and [m.turn for m in session.marks] == [1]


@pytest.mark.parametrize("name, attr", [(UI_FILE, "events"), (HISTORY_FILE, "history"), (REQUESTS_FILE, "records"),
                                        (MARKS_FILE, "marks")])
async def test_each_log_is_appended_to_and_a_torn_last_append_loads_with_a_notice(
        tmp_path: Path, name: str, attr: str) -> None:
    engine = make_engine(scripted(), tmp_path)
    await run(engine, "one")
    log = tmp_path / "task" / name
    first, inode = log.read_bytes(), log.stat().st_ino
    await run(engine, "two")
    assert log.read_bytes().startswith(first[:-2]) and log.stat().st_ino == inode  # appended, not rewritten
    count = len(getattr(engine.session, attr))
    engine.session.close()
    whole = log.read_bytes()
    log.write_bytes(whole[:-12])  # killed in the middle of the last append
    torn = Session.load(tmp_path / "task")
    assert 0 < len(getattr(torn, attr)) == count - 1
    assert any(name in n and "cut short" in n for n in torn.notices)
    torn.close()
    # Only the append's first byte written: the comma replaced the line break; nothing is lost.
    log.write_bytes(whole[:whole.rindex(b"\n")] + b",]")
    assert len(getattr(Session.load(tmp_path / "task"), attr)) == count


async def test_a_secret_set_in_the_environment_between_prompts_is_redacted_from_then_on(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MY_TOKEN", raising=False)
    code = "import os; print(os.environ.get('MY_TOKEN_COPY', 'unset'))"
    engine = make_engine(scripted(tool_reply("python", {"code": code}), text_reply("ok"),
                                  tool_reply("python", {"code": code}), text_reply("ok")),
                         tmp_path, tools=[Python()], allow=("python",), secret_env=("MY_TOKEN",))
    first = await run(engine, "before")
    assert next(e for e in first if isinstance(e, ToolResult)).content == "unset"
    monkeypatch.setenv("MY_TOKEN", "token-value-67890")
    monkeypatch.setenv("MY_TOKEN_COPY", "token-value-67890")  # the same value under another name
    second = await run(engine, "after")
    assert next(e for e in second if isinstance(e, ToolResult)).content == "[redacted]"


async def test_the_shell_sees_no_credential_and_no_configured_secret_whatever_secret_env_says(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", "bearer-token-value-987")
    monkeypatch.setenv("MY_TOKEN", "token-value-12345")
    dump = tmp_path / "seen.env"
    api = scripted(tool_reply("shell", {"command": f"env > '{dump}'"}))
    engine = make_engine(api, tmp_path, tools=[Shell()], shell=True, allow=("shell",), secret_env=("MY_TOKEN",))
    await run(engine, "show the environment")
    seen = dump.read_text()
    assert "PATH=" in seen  # the rest of the environment is there
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "MY_TOKEN"):
        assert f"{name}=" not in seen
