"""Money and limits in the magics (issue 28), in an in-process IPython shell on the simulated API:
a rollback never lowers what was spent, the per-prompt budget counts the prompt, the session
budget is its own setting, Cancel on a retry countdown ends the cell as cancelled (not as an
interrupt) with the attempted requests counted, and ``%agent retry`` re-sends only a failed prompt."""

from __future__ import annotations

import threading
import time
import warnings
from typing import Any

import pytest

from nbagent.notebook import magics as magics_mod

from .test_magics_inprocess import _fails_with, fails, ip, run, session  # noqa: F401  (ip: its fixture)


@pytest.fixture
def shell(ip: Any) -> Any:  # noqa: F811  (the imported fixture, requested by name)
    """The in-process shell with nbagent loaded (test_magics_inprocess's ``ip``)."""
    return ip


def test_rollback_never_lowers_what_the_session_spent(shell):
    run(shell, "%%agent\nWhat is 17 * 23?")
    run(shell, "%%agent\nWhat is 2 * 4?")
    spent = session().totals.spent_usd
    assert session().totals.spent_requests == 4
    run(shell, "%agent rollback 1")
    t = session().totals
    assert t.spent_usd == pytest.approx(spent) and t.requests == 2 and t.cost_usd < spent
    cost = run(shell, "%agent cost")
    assert f"spent ${spent:.4f} in 4 request(s)" in cost
    assert f"in the current history ${t.cost_usd:.4f} (2 request(s)" in cost
    assert f"spent ${spent:.4f} in 4 request(s)" in run(shell, "%agent status")
    assert session().cost == pytest.approx(spent)  # the session object's cost is what was spent
    # The next cell's header starts from what was spent, not from the shrunken history.
    run(shell, "%%agent\nWhat is 3 * 3?")
    assert session().view.header.cost == pytest.approx(session().totals.spent_usd)
    assert session().view.header.cost > spent


def test_the_prompt_budget_counts_this_prompt_not_the_session(shell):
    run(shell, "%%agent\nWhat is 17 * 23?")  # two requests already spent
    spent = session().totals.spent_usd
    # Far below what the session spent: counting the session, it stopped before sending anything.
    run(shell, "%%agent --max-budget 0.0001\nWhat is 2 * 4?")
    done = session().view.done
    assert done.reason == "max_budget" and done.totals.spent_requests == 3  # one request, not none
    in_prompt = done.totals.spent_usd - spent
    assert in_prompt < spent  # the prompt's own spend, not the session's
    assert (f"stopped: this prompt's budget $0.0001 reached (${in_prompt:.4f} spent in this prompt)"
            in session().view.transcript())


def test_the_session_budget_is_its_own_setting_and_names_itself(shell):
    run(shell, "%%agent\nWhat is 17 * 23?")
    spent = session().totals.spent_usd
    run(shell, f"%%agent --max-session-budget {spent / 2:.6f}\nWhat is 2 * 4?")
    done = session().view.done
    assert done.reason == "max_budget" and done.totals.spent_requests == 2  # nothing more was sent
    assert f"stopped: the session budget ${spent / 2:.4f} reached (${spent:.4f} spent in this session)" \
        in session().view.transcript()
    assert session().agent.config.max_session_budget_usd == pytest.approx(float(f"{spent / 2:.6f}"))
    magics = magics_mod.active_magics()
    magics.max_session_budget = 0.25
    try:
        assert magics.new_session().agent.config.max_session_budget_usd == 0.25
        assert "AgentMagics.max_session_budget = 0.25" in run(shell, "%agent config")
    finally:
        magics.max_session_budget = None
    assert "must be a positive amount of USD" in fails(shell, "%%agent --max-session-budget -1\nhi")


def test_retry_after_an_answered_prompt_sends_nothing(shell):
    run(shell, "%%agent\nWhat is 1 + 2?")
    api = session().agent.simulated_api
    sent = len(api.requests)
    message = fails(shell, "%agent retry")
    assert "Nothing to retry: the last prompt was answered" in message
    assert len(api.requests) == sent and session().turn == 1
    run(shell, "%%agent --max-requests 1\nWhat is 6 * 7?")  # a limit is a normal end, not a failure
    sent = len(api.requests)
    assert "stopped at a limit (max_requests)" in fails(shell, "%agent retry")
    assert len(api.requests) == sent


def _press_retry_cancel_soon() -> threading.Thread:
    """The user's click on Cancel of a retry's countdown, from another thread, once it is shown."""

    def press() -> None:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            view = session().view
            try:
                if view is not None and view.retry_status.outcome is None:
                    view.retry_status.cancel()
                    return
            except LookupError:
                pass
            time.sleep(0.02)  # polling for the countdown to appear, not a wait for an outcome

    clicker = threading.Thread(target=press, daemon=True)
    clicker.start()
    return clicker


def test_cancel_on_a_retry_countdown_ends_the_cell_as_cancelled(shell):
    from nbagent.notebook.outcome import AgentRunCancelled
    from nbagent.providers.simulated import Fault

    api = session().agent.simulated_api
    api.faults = {len(api.requests) + 1: Fault.overloaded()}  # 529: retried after a countdown
    clicker = _press_retry_cancel_soon()
    exc, shown = _fails_with(shell, "%%agent\nWhat is 4 * 5?")
    clicker.join(5)
    assert isinstance(exc, AgentRunCancelled) and not isinstance(exc, KeyboardInterrupt)
    assert "cancelled" in str(exc) and "%agent retry" in str(exc)
    assert exc._render_traceback_() == [f"AgentRunCancelled: {exc}"]
    text = session().view.transcript()
    assert "cancelled — this run 1 request(s) attempted, 0 answered" in text and "interrupted" not in text
    # A cancelled prompt is one %agent retry re-sends.
    out = run(shell, "%agent retry")
    assert "20" in out and "done: end_turn" in out


def test_a_failed_request_counts_as_attempted(shell):
    from nbagent.providers.simulated import Fault

    from .test_magics_inprocess import _press_cancel_soon

    api = session().agent.simulated_api
    api.faults = {len(api.requests) + 1: Fault.auth()}  # 401: the card's Cancel ends the run
    clicker = _press_cancel_soon()
    _fails_with(shell, "%%agent\nWhat is 4 * 5?")
    clicker.join(5)
    assert "done: error — this run 1 request(s) attempted, 0 answered" in session().view.transcript()




def test_a_request_dropped_mid_answer_is_named_in_what_was_spent_not_called_a_rollback(shell):
    # Notebook 03's dropped stream: the attempt the API billed (message_start's input, its cache write)
    # has no row in the turn table, so `%agent cost` said "spent … in 4 request(s); in the current history
    # … (3 request(s); rolled-back requests stay spent)" in a session nobody rolled back.
    from nbagent.providers.simulated import Fault

    run(shell, "%%agent\nWhat is 17 * 23?")
    api = session().agent.simulated_api
    api.faults = {len(api.requests) + 1: Fault.drop(after_events=8)}
    run(shell, "%%agent\nTell me a little about yourself.")
    t = session().totals
    # The attempt is billed in the row of the request it was retried as: the rows add up to spent.
    assert t.spent_requests == t.requests + 1 and abs(t.spent_usd - t.cost_usd) < 1e-12
    cost = run(shell, "%agent cost")
    assert f"in the current history ${t.cost_usd:.4f} ({t.requests} request(s); the others were rolled back, " \
           "or cut off mid-answer: billed in the row of the request they were retried as, or, stopped with ■ " \
           "or made on a model the request then fell back from, in no row; they stay spent)" in cost
    assert "rolled-back requests stay spent" not in cost
    cut = sum(r.unanswered_usage.total_tokens for r in session().agent.records if r.unanswered_usage is not None)
    assert cut > 0 and f"cut-off tokens {cut:,}" in cost  # the turn table's column, under the same name


def test_the_next_prompts_header_keeps_the_sessions_requests_without_prices_unknown(shell):
    # The header of a prompt started from the session's priced spend alone: after a prompt on a
    # model without prices (its header said "unknown"), the next cell's read "session cost $0.0000"
    # and, on a priced model, a plain "$0.0012": what the session spent is unknown (at least that).
    with warnings.catch_warnings():  # "no prices", once a process
        warnings.simplefilter("ignore")
        run(shell, "%%agent --model claude-opus-9-9\nWhat is 17 * 23?")
    assert "session spent unknown" in session().view.header.plain()
    run(shell, "%%agent --model claude-haiku-4-5\nWhat is 2 * 4?")
    header = session().view.header.plain()
    assert "session spent ≥ $" in header and "request(s) without prices" in header, header
    assert "≥ $" in repr(session()) and "request(s) without prices) spent>" in repr(session())  # not "$0.0025 spent"


def test_requests_without_prices_stay_unknown_in_what_was_spent_after_their_rollback(shell):
    # Review of attacker pass 12 (M2): the unpriced count was the history's, the spend the session's;
    # once the unpriced turn was rolled back, what was spent read as the priced part alone.
    run(shell, "%%agent --model claude-haiku-4-5\nWhat is 2 * 4?")
    with warnings.catch_warnings():  # "no prices", once a process
        warnings.simplefilter("ignore")
        run(shell, "%%agent --model claude-opus-9-9\nWhat is 17 * 23?")
    run(shell, "%agent rollback 1")
    t = session().totals
    assert t.unpriced_requests == 0 and session().agent.session.spent.unpriced_requests == 2
    assert t.spent_requests == t.requests + 2
    for said in (repr(session()), run(shell, "%agent cost"), run(shell, "%agent status")):
        assert f"spent ${t.spent_usd:.4f}" not in said and "≥ $" in said, said
        assert "(2 request(s) without prices)" in said, said
    done = run(shell, "%%agent --model claude-haiku-4-5\nWhat is 3 * 3?")  # the next cell's last line too
    assert "(2 request(s) without prices)" in done, done


def test_the_headers_figure_is_named_what_the_session_spent_not_a_second_session_cost(shell):
    """After a rollback the header read "session cost $0.0046" while ``%agent history``'s
    "cumulative cost (session)" ended lower: one name, two values. The header's is what was
    spent (rolled-back requests included), and says so."""
    run(shell, "%%agent\nWhat is 17 * 23?")
    run(shell, "%%agent\nWhat is 2 * 4?")
    run(shell, "%agent rollback 1")
    run(shell, "%%agent\nWhat is 3 * 3?")
    spent, history = session().totals.spent_usd, session().turns_df()
    assert history["cumulative cost (session)"].iloc[-1] < round(spent, 4)  # the two figures differ

    header = session().view.header.plain()

    assert f"session spent ${spent:.4f}" in header and "session cost" not in header, header


def test_a_dropped_attempt_on_a_model_without_prices_leaves_the_done_line_unknown_not_at_least_zero(shell):
    """Every request on a model without prices, one of them dropped mid-answer and retried: the done
    line read "session spent ≥ $0.0000 (4 request(s) without prices)" (a zero, and one request short)
    where ``%agent cost`` said "unknown (5 request(s) without prices)"."""
    from nbagent.providers.simulated import Fault

    with warnings.catch_warnings():  # "no prices", once a process
        warnings.simplefilter("ignore")
        run(shell, "%%agent --model claude-opus-9-9\nWhat is 17 * 23?")
        api = session().agent.simulated_api
        api.faults = {len(api.requests) + 1: Fault.drop(after_events=3)}
        run(shell, "%%agent --model claude-opus-9-9\nWhat is 2 * 4?")
    spent = session().agent.session.spent
    assert spent.unpriced_requests == spent.requests == session().totals.spent_requests

    said = f"session spent unknown ({spent.requests} request(s) without prices)"
    assert said in session().view.transcript() and "≥ $0.0000" not in session().view.transcript()
    assert said in session().view.header.plain()
    assert f"spent unknown ({spent.requests} request(s) without prices)" in run(shell, "%agent cost")
