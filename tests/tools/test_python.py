"""The python tool and NamespaceExecutor: output capture, last-expression repr, tracebacks, abort."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

import pytest

from nbagent.engine.contracts.tool_api import ToolContext
from nbagent.tools import ExecutionResult, Executor, NamespaceExecutor, Python


async def test_stdout_stderr_and_last_expression() -> None:
    ex = NamespaceExecutor()
    r = await ex.execute("import sys\nprint('hi')\nprint('warn', file=sys.stderr)\n1 + 2")
    assert r == ExecutionResult(stdout="hi\n", stderr="warn\n", result_repr="3", error=None, rich=None)


async def test_statements_only_and_none_results() -> None:
    ex = NamespaceExecutor()
    assert (await ex.execute("x = 5")).result_repr is None
    assert (await ex.execute("None")).result_repr is None
    assert (await ex.execute("print('p')")).result_repr is None  # print() returns None
    assert (await ex.execute("'s'")).result_repr == "'s'"


async def test_namespace_persists_and_underscore() -> None:
    ns: dict = {}
    ex = NamespaceExecutor(ns)
    await ex.execute("import math\nx = 41")
    r = await ex.execute("x + 1")
    assert r.result_repr == "42" and ns["_"] == 42 and ns["x"] == 41
    assert (await ex.execute("math.floor(_ / 2)")).result_repr == "21"


async def test_exception_traceback_points_at_user_code() -> None:
    ex = NamespaceExecutor()
    r = await ex.execute("def f():\n    return 1 / 0\n\nprint('before')\nf()")
    assert r.stdout == "before\n" and r.result_repr is None
    assert r.error is not None
    assert r.error.startswith("Traceback (most recent call last):")
    assert "ZeroDivisionError: division by zero" in r.error
    assert "return 1 / 0" in r.error  # the source line is quoted
    assert "executor.py" not in r.error  # our frames are hidden


async def test_syntax_error_and_system_exit() -> None:
    ex = NamespaceExecutor()
    r = await ex.execute("def (:")
    assert r.error is not None and "SyntaxError" in r.error
    r = await ex.execute("raise SystemExit(2)")
    assert r.error is not None and "SystemExit: 2" in r.error


async def test_bad_repr_is_reported() -> None:
    ex = NamespaceExecutor()
    r = await ex.execute("class B:\n    def __repr__(self): raise ValueError('nope')\nB()")
    assert r.result_repr is None and r.error is not None and "repr() of the result failed" in r.error


async def test_top_level_await() -> None:
    r = await NamespaceExecutor().execute("import asyncio\nawait asyncio.sleep(0)\n7")
    assert r.result_repr == "7" and r.error is None


async def test_capture_is_per_thread_and_restored(capsys: pytest.CaptureFixture[str]) -> None:
    ex = NamespaceExecutor()
    original = sys.stdout
    task = asyncio.ensure_future(ex.execute("import time\nprint('inside')\ntime.sleep(0.2)"))
    await asyncio.sleep(0.05)
    print("from the event loop")  # not swallowed by the capture
    r = await task
    assert r.stdout == "inside\n"
    assert "from the event loop" in capsys.readouterr().out
    assert sys.stdout is original


async def test_tool_output_and_errors(tmp_path: Path) -> None:
    tool = Python()
    ctx = ToolContext(cwd=tmp_path)
    out = await tool.run({"code": "print('a')\n[1, 2]"}, ctx)
    assert not out.is_error and out.content == "a\n[result]\n[1, 2]"
    err = await tool.run({"code": "undefined_name"}, ctx)
    assert err.is_error and "[error]" in err.content and "NameError" in err.content
    assert (await tool.run({"code": "x = 1"}, ctx)).content == "(no output)"
    # The fallback executor lives on the tool: state persists between calls.
    assert (await tool.run({"code": "y = 10"}, ctx)).content == "(no output)"
    assert "[result]\n11" in (await tool.run({"code": "y + 1"}, ctx)).content


class FakeExecutor:
    def __init__(self, result: ExecutionResult) -> None:
        self.result = result
        self.codes: list[str] = []

    async def execute(self, code: str) -> ExecutionResult:
        self.codes.append(code)
        return self.result


async def test_uses_ctx_executor_and_rich_images(tmp_path: Path) -> None:
    fake = FakeExecutor(ExecutionResult(stdout="out\n", rich={"image/png": "iVBORw0K", "text/plain": "<Figure>"}))
    assert isinstance(fake, Executor)
    out = await Python().run({"code": "plot()"}, ToolContext(cwd=tmp_path, executor=fake))
    assert fake.codes == ["plot()"]
    assert out.content == [
        {"type": "text", "text": "out"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0K"}},
    ]


async def test_abort_stops_waiting_within_a_second(tmp_path: Path) -> None:
    abort = asyncio.Event()
    ex = NamespaceExecutor()
    context = ToolContext(cwd=tmp_path, abort=abort, executor=ex)
    task = asyncio.ensure_future(Python().run({"code": "import time; time.sleep(5)"}, context))
    await asyncio.sleep(0.1)
    start = time.monotonic()
    abort.set()
    out = await task
    assert time.monotonic() - start < 3.0  # not the 5 s the code sleeps; room for a loaded CI machine
    assert out.is_error and "Aborted" in out.content


async def test_abort_before_start(tmp_path: Path) -> None:
    abort = asyncio.Event()
    abort.set()
    fake = FakeExecutor(ExecutionResult())
    out = await Python().run({"code": "1"}, ToolContext(cwd=tmp_path, abort=abort, executor=fake))
    assert out.is_error and "Aborted" in out.content


async def test_executions_never_overlap_after_an_abort(tmp_path: Path) -> None:
    ex = NamespaceExecutor()
    abort = asyncio.Event()
    tool = Python()
    context = ToolContext(cwd=tmp_path, abort=abort, executor=ex)
    task = asyncio.ensure_future(tool.run({"code": "import time\ntime.sleep(0.3)\nstep = 1"}, context))
    await asyncio.sleep(0.05)
    abort.set()
    assert (await task).is_error
    # The abandoned code is interrupted when its sleep returns (issue 22: an aborted call stops),
    # and the next execution runs only after it ended: it never saw `step = 1` run.
    r = await ex.execute("step")
    assert r.error is not None and "NameError" in r.error


async def test_a_value_with_an_html_form_is_not_shown_twice_in_the_card(tmp_path) -> None:
    from nbagent.engine.contracts.tool_api import ToolContext
    from nbagent.tools import Python
    from nbagent.tools.executor import ExecutionResult

    class Rich:
        async def execute(self, code: str) -> ExecutionResult:
            return ExecutionResult(stdout="", result_repr="   a\n0  1", rich={"text/html": "<table>…</table>"})

    out = await Python().run({"code": "df"}, ToolContext(cwd=tmp_path, executor=Rich()))
    assert "[result]" in out.content  # the model still gets the repr
    assert out.display == "(the value is shown below)"  # the card shows the HTML table instead


async def test_what_the_code_displayed_reaches_the_model_and_the_card_draws_it_once(tmp_path) -> None:
    """``display(df)`` read as "(no output)" to the model (and to an MCP client's run_code), which
    concluded the code showed nothing; the card draws the displays, so its text leaves them out."""
    from nbagent.engine.contracts.tool_api import ToolContext
    from nbagent.tools import Python
    from nbagent.tools.executor import ExecutionResult

    class Displays:
        async def execute(self, code: str) -> ExecutionResult:
            return ExecutionResult(stdout="p\n", displayed="   a\n0  1\n", rich={"text/html": "<table>…</table>"})

    out = await Python().run({"code": "print('p'); display(df)"}, ToolContext(cwd=tmp_path, executor=Displays()))
    assert out.content == "p\n[displayed]\n   a\n0  1"
    assert out.display == "p"
