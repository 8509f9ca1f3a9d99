"""A kernel restarted in the middle of a prompt (real kernels): the next run of the cell starts a
new session, and ``%agent cost`` / ``%agent status`` still count what the cut-short session of this
notebook had spent. Another notebook in the same folder never counts it."""

from __future__ import annotations

import glob
import json
import re
from pathlib import Path
from typing import Iterator

import pytest

from nbagent.classroom import _folder_figures
from tests.kernel_driver import KernelDriver

pytestmark = pytest.mark.kernel

PROMPT = "What is the sum of `x`? use python"
SETUP = "%load_ext nbagent\n%config AgentMagics.allow = ['python']\nx = [1, 2, 3]"
STALL_SECOND_REQUEST = ("import nbagent\nfrom nbagent.providers.simulated import Fault\n"
                        "nbagent.session().agent.simulated_api.faults = {2: Fault.stall(120)}")


def _run(d: KernelDriver, code: str) -> str:
    run = d.wait_done(d.execute(code), 120)
    assert run.status == "ok", run.text
    return run.text


def _spent(folder: Path) -> tuple[float, int]:
    """What each session folder's records say it spent, and in how many requests, added up."""
    usd, requests = 0.0, 0
    for task in glob.glob(str(folder / ".nbagent" / "sessions" / "*")):
        figures = _folder_figures(Path(task))
        assert figures is not None
        usd, requests = usd + figures["cost_usd"], requests + figures["requests"]
    return usd, requests


def _first_request_recorded(folder: Path) -> bool:
    return any('"request":1' in Path(f).read_text()
               for f in glob.glob(str(folder / ".nbagent" / "sessions" / "*" / "requests.json")))


@pytest.fixture
def cut_short(tmp_path, monkeypatch) -> Iterator[tuple[Path, KernelDriver]]:
    """analysis.ipynb's kernel, restarted while its first prompt waits for its second answer (its
    first request answered and billed), then set up again."""
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    d = KernelDriver("python3", env={"JPY_SESSION_NAME": str(tmp_path / "analysis.ipynb")}, cwd=str(tmp_path),
                     widgets=False)
    try:
        _run(d, SETUP)
        _run(d, STALL_SECOND_REQUEST)
        d.execute(f"%%agent\n{PROMPT}")
        d.wait(lambda: _first_request_recorded(tmp_path), timeout=60, what="request 1 recorded")
        d.km.restart_kernel(now=True)
        d.kc.wait_for_ready(timeout=60)
        _run(d, SETUP)
        yield tmp_path, d
    finally:
        d.close()


def test_after_a_restart_mid_prompt_the_notebooks_cost_keeps_what_the_cut_short_session_spent(cut_short):
    folder, d = cut_short
    before, _ = _spent(folder)
    assert before > 0
    _run(d, f"%%agent\n{PROMPT}")  # nothing to replay: no turn of it finished
    total, requests = _spent(folder)
    cost = _run(d, "%agent cost")
    assert f"spent ${total:.4f} in {requests} request(s) (${before:.4f} in 1 of them by this notebook's earlier " \
           "session(s) that a kernel restart or ■ cut short before a turn finished)" in cost, cost
    assert f"spent ${total:.4f} in {requests} request(s)" in _run(d, "%agent status")


def _prompt_in_new_kernel(folder: Path, env: dict[str, str]) -> tuple[str, float]:
    """A new kernel in ``folder`` (``env``: which notebook, whose key) runs one prompt: its
    ``%agent cost`` and what the folder's sessions spent meanwhile."""
    kernel = KernelDriver("python3", env=env, cwd=str(folder), widgets=False)
    try:
        _run(kernel, SETUP)
        before, _ = _spent(folder)
        _run(kernel, f"%%agent\n{PROMPT}")
        total, _ = _spent(folder)
        return _run(kernel, "%agent cost"), total - before
    finally:
        kernel.close()


def test_another_notebook_in_the_folder_never_counts_the_cut_short_sessions_spend(cut_short):
    folder, d = cut_short
    d.close()
    cost, spent_here = _prompt_in_new_kernel(folder, {"JPY_SESSION_NAME": str(folder / "other.ipynb")})
    assert "earlier session" not in cost, cost
    own = float(re.search(r"spent \$([0-9.]+)", cost).group(1))  # type: ignore[union-attr]
    assert own == pytest.approx(spent_here, abs=1e-4)


def test_a_cut_short_session_in_a_received_folder_is_not_this_notebooks_spend(cut_short):
    """The folder came from a classmate (a repository with its ``.nbagent/``, a shared drive): their
    kernel of analysis.ipynb was restarted mid-prompt. Its money was spent by them, not by the one who
    opens the notebook now (another user: another signing key): their ``%agent cost`` never adds it."""
    folder, d = cut_short
    d.close()
    cost, spent_here = _prompt_in_new_kernel(folder, {"JPY_SESSION_NAME": str(folder / "analysis.ipynb"),
                                                      "NBAGENT_REPLAY_KEY_FILE": str(folder.parent / "my_replay_key")})
    assert "by this notebook's earlier session" not in cost, cost
    assert "not added: 1 earlier session(s)" in cost, cost  # said, not silently $0
    own = float(re.search(r"spent \$([0-9.]+)", cost).group(1))  # type: ignore[union-attr]
    assert own == pytest.approx(spent_here, abs=1e-4)


def test_a_cut_short_session_an_earlier_nbagent_linked_is_said_not_silently_dropped(cut_short):
    """An upgrade: main's nbagent linked the cut-short session with no signature. Its money is not
    added (an unsigned index may be planted), but ``%agent cost`` and ``%agent status`` say a session
    was left out and why, instead of reading as if nothing had been spent before."""
    folder, d = cut_short
    indexes = glob.glob(str(folder / ".nbagent" / "replay" / "*.json"))
    assert len(indexes) == 1
    data = json.loads(Path(indexes[0]).read_text())
    del data["linked"]
    Path(indexes[0]).write_text(json.dumps(data))
    _run(d, f"%%agent\n{PROMPT}")
    for command in ("%agent cost", "%agent status"):
        said = _run(d, command)
        assert "by this notebook's earlier session" not in said, said
        assert "not added: 1 earlier session(s) linked to this notebook's name" in said, said


def test_after_a_restart_mid_prompt_history_says_what_cost_adds_that_its_rows_leave_out(cut_short):
    """``%agent history`` lists the new session's requests; ``%agent cost`` adds what the cut-short
    session of this notebook spent. Was: the two disagreed with no word why (history's rows summed to
    less than cost's total); now history says what cost adds and where it comes from."""
    folder, d = cut_short
    before, _ = _spent(folder)
    _run(d, f"%%agent\n{PROMPT}")
    history = _run(d, "%agent history")
    assert (f"%agent cost also counts ${before:.4f} in 1 request(s) by this notebook's earlier session(s) that a "
            "kernel restart or ■ cut short before a turn finished (not rows here") in history, history


def test_history_before_any_cell_ran_again_says_what_the_cut_short_session_spent(cut_short):
    """After the restart, before the agent cell runs again: history said only "no requests yet"
    though the cut-short session of this notebook had spent money."""
    folder, d = cut_short
    before, _ = _spent(folder)

    history = _run(d, "%agent history")

    assert "no requests yet" in history, history
    assert f"earlier session(s) spent ${before:.4f} in 1 request(s) before a kernel restart" in history, history


def test_cost_before_any_cell_ran_again_says_what_the_cut_short_session_spent(cut_short):
    """After the restart, before the agent cell runs again: ``%agent cost`` failed with "No agent
    session yet" (stopping Run All there) while ``%agent history`` said what the cut-short session of
    this notebook had spent. Now cost says it too, counted as it is once a session exists."""
    folder, d = cut_short
    before, _ = _spent(folder)

    said = _run(d, "%agent cost")

    assert "no requests yet in this kernel" in said, said
    assert f"spent ${before:.4f} in 1 request(s) (${before:.4f} in 1 of them by this notebook's earlier" in said, said


def test_an_index_damaged_after_the_first_prompt_is_named_as_left_out(cut_short):
    """The first prompt refuses a damaged replay index, naming it; one damaged after that (a pull, a
    merge conflict) was skipped by ``%agent cost`` / ``%agent status`` without a word, its session's
    spend silently not added. Now both say it was left out, and which file."""
    folder, d = cut_short
    _run(d, f"%%agent\n{PROMPT}")
    damaged = folder / ".nbagent" / "replay" / "20261207-100000-12-1.json"
    damaged.write_text("<<<<<<< HEAD\n{")
    for command in ("%agent cost", "%agent status"):
        said = _run(d, command)
        assert "left out: 1 replay index(es) that could not be read" in said, said
        assert ".nbagent/replay/20261207-100000-12-1.json (invalid JSON" in said, said


def test_cost_and_status_read_each_replay_index_once(cut_short):
    """A received folder of many (or large) indexes: ``%agent cost`` and ``%agent status`` each
    parsed every one twice (once for the spend, once for the unsigned count)."""
    folder, d = cut_short
    _run(d, f"%%agent\n{PROMPT}")
    indexes = len(glob.glob(str(folder / ".nbagent" / "replay" / "*.json")))
    _run(d, "import nbagent.notebook.document.earlier as _e\n_reads = []\n_load = _e.load_index\n"
            "_e.load_index = lambda root, name: (_reads.append(name), _load(root, name))[1]")
    for command in ("%agent cost", "%agent status"):
        said = _run(d, f"_reads.clear()\nget_ipython().run_line_magic('agent', {command[7:]!r})\nprint('reads', len(_reads))")
        assert f"reads {indexes}\n" in said + "\n", said
