"""A turn whose Allow / Deny question nobody could answer (its page reloaded, closed or asleep
while it waited) is denied for the user with "Run the agent cell again to be asked again". It is
not recorded, as an interrupted turn is not: Restart & Run All (or a student's next day) used to
replay the denial as the cell's answer, and running the cell again replayed it again, never asking
(newcomer pass 17)."""

from __future__ import annotations

from typing import Any

from nbagent.notebook import magics as magics_mod
from nbagent.notebook import waiting
from nbagent.notebook.document import page
from nbagent.notebook.view.questions import LOST_PROMPT

from .test_replay_inprocess import FIRST, cell, ip, restart

__all__ = ["ip"]  # the fixture, shared with test_replay_inprocess


class GoneWhileWaiting:
    """The page shows the prompt, then answers no more (closed, asleep)."""

    def __init__(self) -> None:
        self.asked = 0

    async def __call__(self) -> bool:
        self.asked += 1
        return self.asked == 1


def test_a_turn_whose_question_nobody_could_answer_is_asked_again_after_a_restart_not_replayed(
        ip: Any, monkeypatch: Any) -> None:
    monkeypatch.setenv("JPY_SESSION_NAME", "lesson.ipynb")
    monkeypatch.setattr(waiting, "SHOWN_EVERY_S", 0.05)
    magics = magics_mod.active_magics()
    magics.allow = []  # python asks
    with monkeypatch.context() as m:
        m.setattr(page, "shown_check", lambda bridge: GoneWhileWaiting())
        lost = cell(ip, FIRST)
    assert LOST_PROMPT in lost and "391" not in lost.split(LOST_PROMPT)[-1]

    restart(magics)
    magics.allow = ["python"]
    again = cell(ip, FIRST)  # Restart & Run All, or the cell run again in a new kernel

    assert "replayed" not in again and "no request sent" not in again  # on the old code: the denial, replayed
    assert LOST_PROMPT not in again and "391" in again  # asked again, as the notice promised
