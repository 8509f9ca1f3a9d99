"""A replayed cell's ``--allow`` carries to your next live prompt only for the tools its signed
record allowed: the options line is not signed, and anyone who edits a notebook of yours (a pull
request, a shared drive) could add ``--allow bash`` to an agent cell that still replays."""

from __future__ import annotations

from typing import Any

from nbagent.notebook import magics as magics_mod
from nbagent.notebook.document.replayed_options import ALLOW_NOT_SIGNED_LINE

from .test_replay_from_notebook import QUESTION, Lab, lab

__all__ = ["lab"]  # the in-process kernel with a front-end fixture


def _recorded_then_edited(lab: Lab, line: str) -> str:
    """Record the first cell live with ``--allow python``, then Run All after its options line became ``line``."""
    magics_mod.active_magics().allow = []
    lab.front.cells[0]["source"] = f"%%agent --allow python\n{QUESTION}"
    assert "391" in lab.run()
    lab.front.cells.append({"cell_type": "code", "id": "c-next", "source": "%%agent\nnow add 5 to it with python",
                            "metadata": {}, "outputs": [], "execution_count": None})
    lab.restart()
    lab.front.cells[0]["source"] = f"%%agent {line}\n{QUESTION}"
    return lab.run()


def _next_prompt(lab: Lab) -> None:
    """The cell after it, run live in the replayed session (the agent's code cell lies between them)."""
    assert "replayed: session" not in lab.run(next(i for i, c in enumerate(lab.front.cells) if c["id"] == "c-next"))


def _agent() -> Any:
    current = magics_mod.active_magics().current
    assert current is not None
    return current.agent


def test_an_allow_added_to_a_replayed_cells_options_line_is_not_carried_and_says_so(lab: Lab) -> None:
    out = _recorded_then_edited(lab, "--allow python shell")

    assert "replayed: session" in out and ALLOW_NOT_SIGNED_LINE.format(tools="shell") in out
    _next_prompt(lab)
    assert "python" in _agent().config.allow and "shell" not in _agent().config.allow


def test_the_allow_the_record_was_made_with_still_holds_after_run_all(lab: Lab) -> None:
    out = _recorded_then_edited(lab, "--allow python")

    assert "replayed: session" in out and "not carried" not in out
    _next_prompt(lab)
    assert "python" in _agent().config.allow
