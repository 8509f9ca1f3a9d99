"""A teacher changes the window of the session the notebook's code makes (notebook 02's
``magics.new_session(context_window=4000, …)`` → 6000) and runs it again in the same folder: every
prompt replayed the 4,000-token window's answers (its truncations, "/ 4,000 window") with no line
saying the setting differs. The replay now names the changed setting, and the ``live`` policy asks."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient

from .test_replay_changed_nbclient import text

pytestmark = pytest.mark.kernel

PROMPTS = ["What is 17 * 23?", "What is 2 * 4?"]


def notebook(window: int, policy: str | None = None) -> Any:
    setup = "%load_ext nbagent\nimport nbagent"
    if policy is not None:
        setup += f"\n%config AgentMagics.replay_if_changed = '{policy}'"
    loop = (f"magics = nbagent.notebook.magics.active_magics()\n"
            f"magics.new_session(context_window={window}, allow=('python',))\n"
            f"for p in {PROMPTS!r}:\n"
            "    await nbagent.notebook.magics.run_agent_cell('', p)")
    return nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in (setup, loop)])


def run(cwd: Path, window: int, policy: str | None = None) -> str:
    nb = notebook(window, policy)
    NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(cwd)}}).execute()
    return text(nb.cells[1])


@pytest.fixture
def recorded(tmp_path, monkeypatch) -> Path:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)  # the offline simulated model answers
    assert "/ 4,000 window" in run(tmp_path, 4000)
    return tmp_path


def test_the_same_settings_replay_without_a_line(recorded):
    out = run(recorded, 4000)
    assert out.count("replayed: session") == 2 and "changed since" not in out


def test_a_changed_window_is_named_on_every_replayed_prompt_and_live_asks_with_it(recorded):
    out = run(recorded, 6000)
    assert out.count("⚠ the session's context window (6,000 now, 4,000 when recorded) changed since this answer "
                     "was recorded") == 2, out
    live = run(recorded, 6000, policy="live")
    assert "replayed: session" not in live and "/ 6,000 window" in live and "/ 4,000 window" not in live


def test_a_model_the_api_names_by_its_dated_id_is_the_model_the_session_asks_for():
    # The API answers an alias with a dated id, which the record keeps: no "changed" line for that.
    from nbagent.notebook.document.settings_changed import same_model

    assert same_model("claude-sonnet-5-5-20261001", "claude-sonnet-5-5")
    assert same_model("claude-sonnet-5-5", "claude-sonnet-5-5")
    assert not same_model("claude-opus-5", "claude-sonnet-5-5")
    assert not same_model("claude-opus-5-5", "claude-opus-5")  # another model, not a dated id of it
