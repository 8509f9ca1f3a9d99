"""The failed-request card's Cancel is the one unattended runs press, told by its tooltip from the
retry countdown's Cancel (which would end an automatic retry that may succeed)."""

from __future__ import annotations

from nbagent.engine.contracts import events as ev
from nbagent.notebook import autorun
from nbagent.notebook.view.retry import FailurePrompt, RetryStatus


def test_only_the_failed_request_cards_cancel_carries_the_name_unattended_runs_press() -> None:
    failed = FailurePrompt(ev.ApiRequestFailed(error_kind="auth", message="invalid x-api-key", status=401,
                                               request_id=None, attempts=1, can_shorten=True))
    countdown = RetryStatus(ev.RetryScheduled(attempt=1, max_attempts=3, delay_s=1.0, error_kind="overloaded",
                                              message="overloaded", status=529, request_id=None), None, None)
    assert failed.cancel_button.tooltip == autorun.CANCEL_FAILED  # the two constants cannot drift apart
    pressable = {autorun.CANCEL_FAILED, "Allow", "Deny"}
    for button in (countdown.cancel_button, countdown.retry_button, failed.retry_button, failed.new_session_button):
        assert button.description not in pressable and (button.tooltip or None) not in pressable
