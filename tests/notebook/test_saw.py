"""``%agent saw``: the first request of a turn in full, the others as changes, bounded in size."""

from __future__ import annotations

from typing import Callable

from nbagent.engine.contracts.messages import Message
from nbagent.engine.state.sent import SentRequest
from nbagent.notebook.saw import TOTAL_CHARS, render_sent

from .test_magics_inprocess import ip, run  # noqa: F401  (fixture)


def _fixed(messages: list[Message]) -> Callable[[SentRequest], list[Message]]:
    """A ``rebuild`` that gives back these messages."""
    return lambda sent: messages


def _requests(n: int, result_chars: int) -> list[SentRequest]:
    """A turn of ``n`` requests, each after one more tool call whose result is ``result_chars`` long."""
    history: list[Message] = [{"role": "user", "content": "count the rows"}]
    sent = []
    for k in range(1, n + 1):
        msgs = [m.copy() for m in history]
        sent.append(SentRequest(k, 1, "m", "SYSTEM " * 50, ("python",), len(msgs), -1, None, k,
                                rebuild=_fixed(msgs)))
        history.append({"role": "assistant", "content": [
            {"type": "tool_use", "id": f"t{k}", "name": "python", "input": {"code": f"step({k})"}}]})
        history.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": f"t{k}", "content": f"result {k} " + "x" * result_chars}]})
    return sent


def test_saw_shows_the_first_request_in_full_and_the_others_as_changes():
    text = render_sent(_requests(3, 10)).plain()
    assert "=== request 1 (turn 1, m): 1 messages, tools python — in full" in text
    assert "=== request 2 (turn 1, m): 3 messages, tools python — changes from request 1" in text
    assert text.count("count the rows") == 1 and text.count("--- system\n") == 1
    assert "--- = system unchanged" in text and "--- = 3 block(s) unchanged" in text
    assert "--- + [3] assistant\ntool_use python" in text and "step(2)" in text


def test_saw_output_is_bounded_for_a_long_turn_with_large_tool_results():
    sent = _requests(10, 100_000)  # in full, ~5 MB of requests
    view = render_sent(sent)
    plain, html = view.plain(), view.html()
    assert len(plain) < TOTAL_CHARS + 20_000 and len(html) < 2 * TOTAL_CHARS
    assert "more chars)" in plain and "output bounded" not in plain  # diffs keep every request in
    assert all(f"=== request {k} " in plain for k in range(1, 11))


def test_saw_names_the_requests_it_leaves_out_past_the_bound():
    sent = _requests(3, 10)
    huge = [SentRequest(k, 1, "m", f"S{k} " * 200_000, ("python",), 1, -1, None, k,
                        rebuild=lambda s: [{"role": "user", "content": "q"}]) for k in range(4, 104)]
    text = render_sent(sent + huge).plain()
    assert "output bounded" in text and "103 not shown" in text and len(text) < TOTAL_CHARS + 20_000


def test_saw_magic_after_a_multi_request_turn_shows_diffs(ip):  # noqa: F811
    run(ip, "%%agent\nWhat is 2 * 3 and 4 * 5?")
    out = run(ip, "%agent saw 1")
    assert "— in full" in out and "changes from request 1" in out and "changes from request 2" in out


def test_saw_after_a_load_shows_the_requests_sent_before_it(ip, tmp_path):  # noqa: F811
    run(ip, "%%agent\nWhat is 2 * 3 and 4 * 5?")
    live = run(ip, "%agent saw 1")
    folder = tmp_path / "saved"
    run(ip, f"%agent save {folder}")
    run(ip, "%agent reset")
    run(ip, f"%agent load {folder}")
    assert run(ip, "%agent saw 1") == live and run(ip, "%agent saw") == live


def test_saw_after_loading_a_folder_of_an_earlier_version_says_there_is_nothing_to_show(ip, tmp_path):  # noqa: F811
    run(ip, "%%agent\nWhat is 2 * 3?")
    folder = tmp_path / "saved"
    run(ip, f"%agent save {folder}")
    (folder / "sent_requests.json").unlink()  # an earlier version did not save what was sent
    run(ip, "%agent reset")
    run(ip, f"%agent load {folder}")
    out = run(ip, "%agent saw 1")
    assert "nothing to show for request(s) 1, 2" in out and "earlier nbagent version" in out
    assert "=== request" not in out and "nothing to show" in run(ip, "%agent saw")
    run(ip, "%%agent --allow python\nWhat is 4 * 5?")  # requests made after the load are shown
    out = run(ip, "%agent saw")
    assert "=== request 3 (turn 2" in out and "nothing to show" not in out


def test_saw_s_text_shows_an_escape_the_model_read_marked() -> None:
    """A terminal IPython prints ``%agent saw``'s text: a file's ``\\x1b]52;…`` set the clipboard (attacker pass 20)."""
    history: list[Message] = [{"role": "user", "content": "read notes"}, {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "t1", "content": "notes \x1b]52;c;Y3VybCBldmls\x07\x1b[2K"}]}]
    sent = [SentRequest(1, 1, "m", "SYSTEM", ("read_file",), 2, -1, None, 1, rebuild=_fixed(history))]
    text = render_sent(sent)._repr_mimebundle_()["text/plain"]
    assert "\x1b" not in text and "\x07" not in text and "notes ⟦U+001B⟧]52;c;Y3VybCBldmls⟦U+0007⟧⟦U+001B⟧[2K" in text
