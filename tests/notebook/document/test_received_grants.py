"""A task folder the user received never grants permissions (issue 33): its ``session.json`` may
list ``"allowed_always": ["python", …]``, but neither a Run All replay followed by a live prompt
that continues the record, nor ``%agent load``, lets the model's code run without asking."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

from nbagent.notebook import magics as magics_mod
from nbagent.notebook.document import page
from tests.notebook.document.test_replay_inprocess import FIRST, agent, cell, ip, restart

__all__ = ["ip"]  # the in-process shell fixture


@pytest.fixture(autouse=True)
def shown_as_in_a_kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    """The user's click comes from the thread below, as a notebook page's would: the in-process
    shell stands in for a kernel whose page shows the prompt (plain IPython, or a client that shows
    no widgets, would deny unasked)."""
    monkeypatch.setattr(page, "in_kernel", lambda: True)
    monkeypatch.setattr(page, "_widgets_shown", lambda: True)


SECOND = "what is 6 * 7? use python"  # the simulated model answers it with a python call


def _plant_grants(task_dir: Path) -> None:
    meta_path = task_dir / "session.json"
    meta = json.loads(meta_path.read_text())
    meta["allowed_always"] = ["python", "shell", "write_file"]
    meta_path.write_text(json.dumps(meta))


class _DenyWhenAsked:
    """The user's click on Deny, from another thread, once a permission prompt is shown; keeps
    which tool was asked about."""

    def __init__(self) -> None:
        self.asked: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        while not self._stop.wait(0.05):
            current = magics_mod.active_magics().current
            view = current.view if current is not None else None
            try:
                prompt = view.permission if view is not None else None
            except LookupError:
                continue
            if prompt is not None and prompt.pending and prompt.deny("not now"):
                self.asked.append(prompt.tool_name)

    def stop(self) -> list[str]:
        self._stop.set()
        self._thread.join(5)
        return self.asked


def _python_ran_in_turn_2(a: Any) -> bool:
    start = next(m.history_len for m in a.session.marks if m.turn == 1)
    blocks = [b for m in a.history[start:] for b in m["content"] if isinstance(b, dict)]
    python = {b["id"] for b in blocks if b.get("type") == "tool_use" and b.get("name") == "python"}
    results = [b for b in blocks if b.get("type") == "tool_result" and b.get("tool_use_id") in python]
    return any(not r.get("is_error") for r in results)


def test_run_all_then_a_live_prompt_asks_again_despite_the_folder_s_grants(ip: Any) -> None:
    magics = magics_mod.active_magics()
    cell(ip, FIRST)  # the record, as whoever made the folder ran it (python allowed)
    folder = agent().session.task_dir
    assert folder is not None
    _plant_grants(folder)
    restart(magics)
    magics.allow = []  # this user allowed nothing

    assert "replayed" in cell(ip, FIRST)
    user = _DenyWhenAsked()
    out = cell(ip, SECOND)  # continues the received session live
    assert user.stop() == ["python"]

    assert "replayed" not in out and agent().turn == 2
    assert agent().allowed_always == frozenset()
    assert not _python_ran_in_turn_2(agent()) and len(agent().denials) == 1
    assert "ask again" in out


def test_agent_load_of_a_received_folder_asks_again(ip: Any) -> None:
    magics = magics_mod.active_magics()
    cell(ip, FIRST)
    task = agent().session.task_dir
    assert task is not None
    _plant_grants(task)
    restart(magics)
    magics.allow = []

    ip.run_cell(f"%agent load {task}")
    assert agent().allowed_always == frozenset()
    user = _DenyWhenAsked()
    cell(ip, SECOND)
    assert user.stop() == ["python"]
    assert not _python_ran_in_turn_2(agent()) and len(agent().denials) == 1
