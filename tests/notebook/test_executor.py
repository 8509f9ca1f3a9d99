"""ShellExecutor: the python tool's code runs in the IPython user namespace, output captured."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import logging
import os
import signal
import sys
import threading
from typing import Any, Iterator, cast

import pytest

from nbagent.notebook.executor import ShellExecutor
from nbagent.tools.executor import ExecutionResult, Executor


@pytest.fixture
def shell() -> Iterator[Any]:
    from IPython.core.interactiveshell import InteractiveShell

    ip = InteractiveShell.instance()
    for name in ("x", "y", "Rich"):
        ip.user_ns.pop(name, None)
    yield ip


@pytest.fixture
def executor(shell: Any) -> ShellExecutor:
    return ShellExecutor(shell)


def test_is_an_executor(executor: ShellExecutor) -> None:
    assert isinstance(executor, Executor)


async def test_stdout_stderr_and_last_expression(executor: ShellExecutor, shell: Any) -> None:
    res = await executor.execute("import sys\nx = 41\nprint('hi')\nprint('oops', file=sys.stderr)\nx + 1")
    assert res == ExecutionResult(stdout="hi\n", stderr="oops\n", result_repr="42", error=None, rich=None)
    assert shell.user_ns["x"] == 41  # the user's namespace, shared with the notebook
    assert (await executor.execute("x * 2")).result_repr == "82"
    assert (await executor.execute("x = 3")).result_repr is None
    assert (await executor.execute("None")).result_repr is None


async def test_error_traceback_starts_at_the_models_code(executor: ShellExecutor) -> None:
    res = await executor.execute("def f():\n    return 1/0\nprint('before')\nf()")
    assert res.stdout == "before\n"
    assert res.error is not None and res.error.startswith("Traceback")
    assert "ZeroDivisionError: division by zero" in res.error
    assert "return 1/0" in res.error  # the source line is quoted
    assert "executor.py" not in res.error


async def test_syntax_error(executor: ShellExecutor) -> None:
    res = await executor.execute("def broken(:\n  pass")
    assert res.error is not None and "SyntaxError" in res.error


async def test_top_level_await_runs_on_the_running_loop(executor: ShellExecutor) -> None:
    res = await executor.execute("import asyncio\nawait asyncio.sleep(0.01)\ny = 5\ny")
    assert res.error is None and res.result_repr == "5"


async def test_ipython_syntax_is_transformed(executor: ShellExecutor) -> None:
    res = await executor.execute("out = !echo from-shell\nout[0]")
    assert res.result_repr == "'from-shell'"


async def test_rich_repr_and_displays_are_captured(executor: ShellExecutor, shell: Any) -> None:
    code = (
        "from IPython.display import display, HTML\n"
        "class Rich:\n"
        "    def _repr_html_(self): return '<b>rich</b>'\n"
        "    def __repr__(self): return 'Rich()'\n"
        "display(HTML('<i>shown</i>'))\n"
        "Rich()"
    )
    res = await executor.execute(code)
    assert res.result_repr == "Rich()"
    assert res.rich == {"text/html": "<b>rich</b>"}  # the result's bundle wins over the display
    assert executor.history[-1].displays[0]["data"]["text/html"] == "<i>shown</i>"


async def test_png_bytes_become_base64(executor: ShellExecutor) -> None:
    png = (b"\x89PNG\r\n\x1a\n" + b"\x00" * 16)
    res = await executor.execute(f"from IPython.display import Image\nImage(data={png!r}, format='png')")
    assert res.rich is not None and isinstance(res.rich["image/png"], str)


async def test_records_code_and_calls_hook(shell: Any) -> None:
    seen: list[Any] = []
    ex = ShellExecutor(shell, on_execute=seen.append)
    await ex.execute("1 + 1")
    assert ex.last_code == "1 + 1" and seen[0].result.result_repr == "2" and seen[0].duration_s >= 0


async def test_agent_magic_is_refused(executor: ShellExecutor) -> None:
    res = await executor.execute("%%agent do it again")
    assert res.error is not None and "already running" in res.error


async def test_an_agent_prompt_started_by_code_is_refused_however_it_is_spelt(
        executor: ShellExecutor, shell: Any, tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """``get_ipython().run_cell_magic("agent", …)`` passed the text check: the nested prompt's Allow /
    Deny went into the captured output, seen by no one, and held the kernel (attacker pass 22)."""
    monkeypatch.chdir(tmp_path)  # a prompt that did run (the old code) recorded its session here
    shell.run_cell("%load_ext nbagent")
    res = await executor.execute("get_ipython().run_cell_magic('agent', '', 'what is 2 + 2?')")
    assert res.error is not None and "cannot run %agent/%%agent" in res.error
    after = await executor.execute("print('still runs')")  # the guard is the tool code's only
    assert after.error is None and "still runs" in after.stdout


async def test_streams_are_restored(executor: ShellExecutor) -> None:
    import sys

    before = (sys.stdout, sys.stderr)
    await executor.execute("raise SystemExit(3)")
    assert (sys.stdout, sys.stderr) == before


async def test_cancellation_while_awaiting_propagates(executor: ShellExecutor) -> None:
    task = asyncio.create_task(executor.execute("import asyncio\nawait asyncio.sleep(10)"))
    await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert (await executor.execute("1")).result_repr == "1"  # the lock was released


async def test_sigint_interrupts_blocking_code(executor: ShellExecutor) -> None:
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signals need the main thread")
    previous = signal.getsignal(signal.SIGINT)
    hits: list[int] = []
    signal.signal(signal.SIGINT, lambda *a: hits.append(1))  # like ipykernel's async-cell handler
    try:
        # The code interrupts itself, so the signal surely lands while it runs.
        res = await executor.execute(f"import os, time\nos.kill({os.getpid()}, {int(signal.SIGINT)})\ntime.sleep(5)")
    finally:
        signal.signal(signal.SIGINT, previous)
    assert res.error is not None and "KeyboardInterrupt" in res.error
    assert hits == [1]  # the previous handler ran (it cancels the cell and sets the aborts)


async def test_a_huge_print_is_captured_bounded(shell: Any) -> None:
    bounded = ShellExecutor(shell, capture_limit=5_000)
    result = await bounded.execute("print('y' * 3_000_000)")
    assert len(result.stdout) < 6_000 and "characters of output not captured" in result.stdout


async def test_only_the_latest_executions_are_kept(executor: ShellExecutor) -> None:
    from nbagent.notebook.executor import HISTORY_KEPT

    for i in range(HISTORY_KEPT + 5):
        await executor.execute(f"{i}")
    assert len(executor.history) == HISTORY_KEPT and executor.last_code == f"{HISTORY_KEPT + 4}"


def test_the_running_cells_count_is_the_number_the_front_end_shows(shell: Any) -> None:
    from nbagent.notebook.executor import running_cell_count

    shell.user_ns["_the_shell"] = shell  # (a cell naming get_ipython() would stay in the shared history)
    result = shell.run_cell("from nbagent.notebook.executor import running_cell_count as _rcc\n"
                            "_seen = (_rcc(_the_shell), _the_shell.execution_count)", store_history=True)
    seen, counter = shell.user_ns["_seen"]
    assert seen == result.execution_count  # the cell's [N] (what execute_reply reports) ...
    assert counter == seen + 1  # ... not IPython's counter, already the next cell's during the run
    assert running_cell_count(shell) is None  # outside a cell: no number


async def test_two_executors_on_one_namespace_never_overlap(shell: Any) -> None:
    """nbagent's agent and a ``%agent serve`` client each have an executor on the same namespace:
    while one's code awaits, the other's does not start. Overlapping, each swapped the streams in
    turn and restored them out of order: the agent's output went into the client's result (or the
    other way round), and the kernel's stdout was left pointing at a finished run's buffer."""
    first, second = ShellExecutor(shell), ShellExecutor(shell)
    started, release, b_started, b_release = (asyncio.Event() for _ in range(4))
    shell.user_ns.update(started=started, release=release, b_started=b_started, b_release=b_release)
    stdout = sys.stdout
    a = asyncio.ensure_future(first.execute("started.set()\nawait release.wait()\nprint('from the agent')"))
    await started.wait()
    b = asyncio.ensure_future(second.execute("print('from the client')\nb_started.set()\nawait b_release.wait()"))
    for _ in range(3):  # b's task gets the loop: it must wait for a's run to end
        await asyncio.sleep(0)
    b_ran_meanwhile = b_started.is_set()
    release.set()
    b_release.set()
    ra, rb = await a, await b
    assert not b_ran_meanwhile
    assert ra.stdout == "from the agent\n" and rb.stdout == "from the client\n"
    assert sys.stdout is stdout


@contextlib.contextmanager
def kernel_logging() -> Iterator[None]:
    """Logging as in a kernel: no handler anywhere (pytest's, added to the root logger for the test's
    call, is taken off), so a record goes to ``logging.lastResort``, which writes to the current
    ``sys.stderr``."""
    root = logging.getLogger()
    saved, root.handlers = root.handlers, []
    try:
        yield
    finally:
        root.handlers = saved


async def test_the_kernels_comm_log_lines_stay_out_of_the_captured_output(executor: ShellExecutor, capsys: Any) -> None:
    # After a page reload, ipykernel's comm manager logs "No such comm" from the thread that handles
    # the old page's widget messages; with no handler, logging writes to the *current* sys.stderr.
    code = ("import threading\nfrom comm.base_comm import CommManager\n"
            "t = threading.Thread(target=lambda: CommManager().get_comm('gone-after-reload'))\n"
            "t.start(); t.join()\nprint('done')")
    with kernel_logging():
        res = await executor.execute(code)
    # endswith: IPython's history thread may print into the capture too (a shared test database)
    assert res.stdout.endswith("done\n")
    assert "No such comm" not in res.stderr  # the model never sees the kernel's own log line
    assert "No such comm: gone-after-reload" in capsys.readouterr().err  # where it would have gone


async def test_the_models_own_log_lines_are_still_captured(executor: ShellExecutor) -> None:
    with kernel_logging():
        res = await executor.execute("import logging\nlogging.getLogger('mine').warning('careful')")
    assert "careful" in res.stderr


async def test_displayed_plain_text_is_in_the_result(executor: ShellExecutor) -> None:
    """What ``display()`` showed was only in ``rich`` (its text/plain dropped): a code that displayed
    a string or a frame gave a result that formatted as "(no output)"."""
    res = await executor.execute("from IPython.display import display\ndisplay('first')\ndisplay(123)")
    assert res.displayed == "'first'\n123\n"
    assert res.result_repr is None and res.stdout == ""


async def test_an_updated_display_reads_as_its_last_state(executor: ShellExecutor) -> None:
    """A display updated in place (``handle.update``, how a progress line is drawn) read as every
    state it went through, first to last, while the cell shows only the last one."""
    res = await executor.execute(
        "from IPython.display import display\nh = display('start', display_id=True)\n"
        "display('other')\nfor i in range(1000): h.update(f'step {i}')")
    assert res.displayed == "'step 999'\n'other'\n"


async def test_clear_output_leaves_no_terminal_escapes_in_the_output(executor: ShellExecutor) -> None:
    """``clear_output(wait=True)`` in a loop (how a notebook animates a frame) put IPython's
    terminal erase-line escape in stdout twice per frame: the model read escape codes."""
    res = await executor.execute("from IPython.display import display, clear_output\nprint('start')\n"
                                 "for i in range(3):\n    clear_output(wait=True)\n    display(f'frame {i}')")
    assert res.stdout == "" and res.stderr == ""  # 'start' was cleared with the first frame, as in the cell
    assert res.displayed == "'frame 2'\n"


async def test_clear_output_clears_what_was_printed_as_the_cell_does(executor: ShellExecutor) -> None:
    """A ``clear_output(wait=True); print(i)`` loop (a progress counter) read as every line it ever
    printed, the cell showing one: the model read more than the cell shows, up to the capture limit."""
    res = await executor.execute("import sys\nfrom IPython.display import clear_output\n"
                                 "for i in range(500):\n    clear_output(wait=True)\n    print(f'epoch {i}')\n"
                                 "    print(f'loss {i}', file=sys.stderr)\nprint('done')")
    assert res.stdout == "epoch 499\ndone\n" and res.stderr == "loss 499\n"


async def test_a_large_image_the_models_code_displays_reaches_it_bounded(executor: ShellExecutor, tmp_path) -> None:
    """nbagent's own model got a displayed 4 MB PNG whole in its python tool's result (a client's
    run_code was bounded, notebook_read too): a larger one is more than a request may carry."""
    from nbagent.engine.contracts.tool_api import ToolContext
    from nbagent.notebook.document.images import MAX_IMAGE_BYTES
    from nbagent.tools import Python

    code = ("import io, numpy as np\nfrom PIL import Image as P\nfrom IPython.display import Image, display\n"
            "b = io.BytesIO(); P.fromarray((np.random.default_rng(0).random((1200, 1200, 3)) * 255)"
            ".astype('uint8')).save(b, 'PNG')\nassert len(b.getvalue()) > 3_000_000\n"
            "display(Image(data=b.getvalue(), format='png'))")
    out = await Python().run({"code": code}, ToolContext(cwd=tmp_path, executor=executor))
    assert isinstance(out.content, list) and not out.is_error, out.content
    blocks = cast(list[dict[str, Any]], out.content)
    images = [base64.b64decode(b["source"]["data"]) for b in blocks if b["type"] == "image"]
    assert len(images) == 1 and len(images[0]) <= MAX_IMAGE_BYTES
    assert "1200×1200 px" in blocks[0]["text"] and "sent downscaled to" in blocks[0]["text"]
