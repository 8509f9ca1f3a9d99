"""Cards' button rows: each button as wide as its label, the row wraps (newcomer pass 26), built
from Layout traits ipywidgets knows.

``row_gap="4px"`` is no ipywidgets Layout trait: it never reached the page, and traitlets warned
"Passing unrecognized arguments to super(Layout).__init__(row_gap='4px') … will be raised in a future
release": under ``-W error`` (or ``warnings.simplefilter("error")`` in the notebook) every permission
card, retry countdown and failed-request card raised instead of showing.
"""

from __future__ import annotations

import warnings

from nbagent.engine.contracts import events as ev
from nbagent.notebook.view.progress import Activity
from nbagent.notebook.view.prompts import PermissionPrompt
from nbagent.notebook.view.retry import FailurePrompt, RetryStatus


def _cards() -> tuple[PermissionPrompt, RetryStatus, FailurePrompt, Activity]:
    return (PermissionPrompt("python", {"code": "print(6 * 7)"}, ""),
            RetryStatus(ev.RetryScheduled(attempt=1, max_attempts=3, delay_s=1.0, error_kind="overloaded",
                                          message="overloaded", status=529, request_id=None), None, None),
            FailurePrompt(ev.ApiRequestFailed(error_kind="auth", message="invalid x-api-key", status=401,
                                              request_id=None, attempts=1, can_shorten=True)),
            Activity(on_cancel=lambda: None))


def test_cards_build_with_warnings_as_errors() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _cards()


def test_every_cards_buttons_keep_their_labels_and_their_rows_wrap() -> None:
    prompt, countdown, failed, activity = _cards()
    buttons = (prompt.allow_button, prompt.always_button, prompt.deny_button, countdown.retry_button,
               countdown.cancel_button, failed.retry_button, failed.cancel_button, failed.new_session_button,
               activity.cancel_button)
    assert all(b.layout.flex == "0 0 auto" and b.layout.width == "auto" for b in buttons)
    rows = (prompt.widget.children[1], countdown.widget.children[1], failed._buttons)
    assert all(r.layout.flex_flow == "row wrap" for r in rows)
