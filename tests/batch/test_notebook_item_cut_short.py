"""``python -m nbagent.batch --notebook NB``: an item whose notebook fails, or is cut short by Ctrl-C.

A failing item keeps its executed copy (where it stopped, what its agent cells did before), and its
error is text; an item Ctrl-C cut short has no result, so the same command run again runs it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]


def template(path: Path, cell: str) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell('item = "x.csv"', metadata={"tags": ["parameters"]}),
                nbformat.v4.new_code_cell(cell),
                nbformat.v4.new_code_cell('get_ipython().run_cell_magic("agent", "", "What is 2 * 3?")')]
    nbformat.write(nb, str(path))
    return path


def batch(tmp_path: Path, nb: Path, out: Path) -> list[str]:
    return [sys.executable, "-m", "nbagent.batch", "p", str(tmp_path / "d.csv"), "--out", str(out),
            "--provider", "simulated", "--notebook", str(nb)]


ENV = {**os.environ, "PYTHONPATH": str(ROOT), "ANTHROPIC_API_KEY": ""}


@pytest.mark.kernel
def test_a_failing_items_executed_notebook_is_kept_and_its_error_has_no_terminal_colours(tmp_path: Path) -> None:
    """On the old code a failing item kept no ``executed.ipynb`` (the docs say it is kept), and its
    ``error`` in summary.csv read ``CellExecutionError: \\x1b[31mAssertionError\\x1b[39m: empty data``."""
    (tmp_path / "d.csv").write_text("x\n")
    nb = template(tmp_path / "nb.ipynb", "assert False, 'empty data'")
    out = tmp_path / "runs"
    done = subprocess.run(batch(tmp_path, nb, out), capture_output=True, text=True, env=ENV, timeout=600, cwd=tmp_path)
    assert done.returncode == 1 and "0/1 answered" in done.stdout, (done.stdout, done.stderr)
    row = json.loads(next(out.glob("*/result.json")).read_text())
    assert row["error"] == "CellExecutionError: AssertionError: empty data"
    executed = nbformat.read(str(next(out.glob("*/executed.ipynb"))), as_version=4)
    failed = [c for c in executed.cells if any(o.get("output_type") == "error" for o in c.get("outputs", []))]
    assert [c.source for c in failed] == ["assert False, 'empty data'"]
    assert "\x1b" not in (out / "summary.csv").read_text()


def _wait_for(path: Path, process: subprocess.Popen, deadline_s: float) -> None:
    deadline = time.monotonic() + deadline_s
    while not path.exists():
        assert process.poll() is None, "the batch ended before its item started"
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.1)


@pytest.mark.kernel
def test_an_item_cut_short_by_ctrl_c_has_no_result_and_runs_again(tmp_path: Path) -> None:
    """Ctrl-C (SIGINT to the terminal's process group) while an item's notebook ran: on the old code
    nbclient's cleanup error was written as the item's finished result (``outcome: error``,
    ``AssertionError``), so "run the same command again to continue the unfinished items" skipped it."""
    (tmp_path / "d.csv").write_text("x\n1\n")
    started = tmp_path / "started"
    nb = template(tmp_path / "nb.ipynb", f"import pathlib, time\npathlib.Path({str(started)!r}).touch()\n"
                                         "time.sleep(0 if pathlib.Path(item).read_text().count('\\n') > 2 else 120)")
    out = tmp_path / "runs"

    def as_a_terminal_does() -> None:  # Ctrl-C reaches the group; not ignored, as a background job's is
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.setsid()

    process = subprocess.Popen(batch(tmp_path, nb, out), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               env=ENV, cwd=tmp_path, preexec_fn=as_a_terminal_does)
    try:
        _wait_for(started, process, 300)
        os.killpg(process.pid, signal.SIGINT)
        output, _ = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    assert process.returncode == 130, output
    assert list(out.glob("*/result.json")) == [], [p.read_text() for p in out.glob("*/result.json")]
    (tmp_path / "d.csv").write_text("x\n1\n2\n")  # the same item, now quick: the next run runs it
    done = subprocess.run(batch(tmp_path, nb, out), capture_output=True, text=True, env=ENV, timeout=600, cwd=tmp_path)
    assert done.returncode == 0 and "1/1 answered" in done.stdout, (done.stdout, done.stderr)


@pytest.mark.kernel
def test_a_request_that_fails_for_good_fails_the_item_at_once_not_at_the_cells_timeout(tmp_path: Path) -> None:
    """A 401 (an expired key) in an item's agent cell: nobody watches, so the failed-request card's
    **Cancel** is pressed and the item fails with the API's error. On the old code the card waited for
    Retry / Cancel until the cell's timeout (300 s), then the row said ``CellTimeoutError: -------``."""
    (tmp_path / "d.csv").write_text("x\n1\n")
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell('item = "x.csv"', metadata={"tags": ["parameters"]}),
                nbformat.v4.new_code_cell("import nbagent\nfrom nbagent.providers.simulated import Fault\n"
                                          "api = nbagent.session().agent.simulated_api\n"
                                          "api.faults = {len(api.requests) + 1: Fault.auth()}"),
                nbformat.v4.new_code_cell('get_ipython().run_cell_magic("agent", "", "What is 2 * 3?")')]
    nbformat.write(nb, str(tmp_path / "nb.ipynb"))
    out = tmp_path / "runs"
    done = subprocess.run(batch(tmp_path, tmp_path / "nb.ipynb", out), capture_output=True, text=True, env=ENV,
                          timeout=150, cwd=tmp_path)
    assert done.returncode == 1 and "0/1 answered" in done.stdout, (done.stdout, done.stderr)
    row = json.loads(next(out.glob("*/result.json")).read_text())
    assert "invalid x-api-key" in row["error"] and row["seconds"] < 100, row


def test_a_cell_that_timed_out_is_named_so_in_the_items_error() -> None:
    """nbclient's timeout message ends with the dashes under the cell's preview: the row said
    ``CellTimeoutError: -------------------`` (newcomer pass 25)."""
    from nbclient.exceptions import CellTimeoutError

    from nbagent.batch.notebook_item import error_line

    exc = CellTimeoutError.error_from_timeout_and_cell("Cell execution timed out", 300,
                                                       nbformat.v4.new_code_cell("import time\ntime.sleep(999)"))
    assert error_line(exc) == "A cell timed out while it was being executed, after 300 seconds."
    assert error_line(ValueError("x\n\x1b[31mKeyError\x1b[39m: 'a'")) == "KeyError: 'a'"
