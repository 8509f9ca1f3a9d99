"""Building the request: kept pair + rest, orphan stripping, stored updates, tool pairing."""

from __future__ import annotations

import copy

from nbagent.engine.context import (
    CONTINUE_NOTICE,
    ORPHANED_RESULTS_NOTICE,
    RESULT_MISSING,
    TRUNCATION_NOTICE,
    ContextHistoryUpdates,
    ContextManager,
    ensure_tool_results_follow_tool_use,
    get_truncated_messages,
)
from nbagent.engine.contracts.messages import history_problems
from tests.engine.context.test_context_support import assistant, chat, result, text, use, user


def test_short_histories_are_returned_as_a_copy():
    h = [user(text("only"))]
    out = get_truncated_messages(h, (2, 5))
    assert out == h and out is not h
    assert get_truncated_messages([], None) == []


def test_keeps_first_pair_and_rest_ignoring_range_start():
    h = chat(6)
    assert get_truncated_messages(h, None) == h
    assert get_truncated_messages(h, (2, 5)) == h[:2] + h[6:]
    assert get_truncated_messages(h, (4, 5)) == h[:2] + h[6:]  # start ignored
    assert get_truncated_messages(h, (2, 1)) == h  # nothing hidden
    assert get_truncated_messages(h, (2, 40)) == h[:2]  # stale: everything after the pair hidden


def test_range_ending_below_one_never_duplicates_the_pair():
    h = chat(3)
    assert get_truncated_messages(h, (2, -1)) == h
    assert get_truncated_messages(h, (2, 0)) == h


def test_unchanged_messages_are_shared_not_copied():
    h = chat(5)
    out = get_truncated_messages(h, (2, 3))
    assert all(a is b for a, b in zip(out, h[:2] + h[4:], strict=False))


def test_orphan_results_of_first_kept_message_are_stripped():
    h = chat(1) + [
        user(text("go")),
        assistant(use("t1", path="a")),
        user(result("t1", "one"), text("and a note")),
        assistant(text("done")),
    ]
    out = get_truncated_messages(h, (2, 3))
    assert out[2] == user(text("and a note"))
    assert history_problems(out) == []


def test_orphan_stripping_that_empties_the_message_leaves_a_note():
    h = chat(1) + [user(text("go")), assistant(use("t1")), user(result("t1")), assistant(text("done"))]
    out = get_truncated_messages(h, (2, 3))
    assert out[2] == user(text(ORPHANED_RESULTS_NOTICE))
    assert history_problems(out) == []


def test_stripping_only_when_something_is_hidden():
    # message 1 asks for a tool, message 2 answers: nothing hidden, nothing stripped
    h = [user(text("task")), assistant(use("t0")), user(result("t0", "r")), assistant(text("ok"))]
    assert get_truncated_messages(h, None) == h
    assert get_truncated_messages(h, (2, 1)) == h


def test_hidden_answer_to_message_one_becomes_result_missing():
    h = [user(text("task")), assistant(use("t0")), user(result("t0", "r")), assistant(text("ok")), user(text("next"))]
    out = get_truncated_messages(h, (2, 3))
    assert out[2] == user(result("t0", RESULT_MISSING), text("next"))
    assert history_problems(out) == []


# -- stored updates ------------------------------------------------------------------------------


def test_updates_are_applied_by_original_index_and_last_wins():
    h = chat(5)
    up = ContextHistoryUpdates()
    up.add(1, 0, 10, "notice")
    up.add(6, 0, 10, "first")
    up.add(6, 0, 20, "second")
    up.add(4, 0, 10, "hidden")  # inside the range: never shown
    out = get_truncated_messages(h, (2, 5), up)
    assert out[1]["content"][0]["text"] == "notice"
    assert out[2]["content"][0]["text"] == "second"
    assert [m["content"][0]["text"] for m in out[3:]] == [m["content"][0]["text"] for m in h[7:]]


def test_updates_out_of_timestamp_order_are_sorted():
    up = ContextHistoryUpdates()
    up.add(2, 0, 30, "newest")
    up.add(2, 0, 10, "oldest")
    assert up.latest(2, 0).text == "newest"
    assert [u.ts for u in up.block_updates(2)[0]] == [10, 30]


def test_string_content_is_never_edited():
    h = [user("a plain task"), assistant("a plain answer"), user("q"), assistant("a")]
    up = ContextHistoryUpdates()
    up.add(0, 0, 1, CONTINUE_NOTICE)
    up.add(1, 0, 1, TRUNCATION_NOTICE)
    up.add(2, 0, 1, "x")
    assert get_truncated_messages(h, None, up) == h


def test_notice_not_applied_to_string_content_through_the_manager():
    h = [user("a plain task"), assistant("a plain answer")] + chat(4)[2:]
    cm = ContextManager()
    assert cm.apply_truncation_notice(5, h) is False  # message 1 has string content
    assert cm.apply_standard_truncation_notice(5, h) is False
    assert len(cm.updates) == 0
    assert cm.get_truncated_messages(h, (2, 3)) == h[:2] + h[4:]


def test_updates_apply_to_text_tool_result_and_write_content_only():
    h = [
        user(text("task")),
        assistant(text("a"), use("w", "write_file", path="p", content="BODY"), {"type": "thinking", "thinking": "t"}),
        user(result("w", "written")),
    ]
    up = ContextHistoryUpdates()
    up.add(1, 1, 1, "NEW")  # tool_use → input["content"]
    up.add(1, 2, 1, "ignored")  # thinking blocks are not replaceable
    up.add(2, 0, 1, "R")  # tool_result → content
    up.add(2, 7, 1, "out of range")
    out = get_truncated_messages(h, None, up)
    assert out[1]["content"][1]["input"] == {"path": "p", "content": "NEW"}
    assert out[1]["content"][2] == {"type": "thinking", "thinking": "t"}
    assert out[2]["content"][0] == result("w", "R")


def test_building_mutates_nothing():
    h = chat(2) + [user(text("go")), assistant(use("t1"), use("t2")), user(result("t2", "b")), assistant("x")]
    h[-2]["content"] = [result("t2", "b"), result("zz", "unknown")]
    up = ContextHistoryUpdates()
    up.add(1, 0, 1, "N")
    before_h, before_up = copy.deepcopy(h), up.to_json()
    get_truncated_messages(h, (2, 3), up)
    get_truncated_messages(h, None, up)
    assert h == before_h and up.to_json() == before_up


# -- ensure_tool_results_follow_tool_use ---------------------------------------------------------


def test_missing_results_are_filled_in_order():
    msgs = [user(text("t")), assistant(use("a"), use("b"), use("c")), user(result("b", "B"))]
    out = ensure_tool_results_follow_tool_use(msgs)
    assert out[2]["content"] == [result("a", RESULT_MISSING), result("b", "B"), result("c", RESULT_MISSING)]


def test_results_reordered_unknown_dropped_duplicates_keep_last_others_follow():
    msgs = [
        user(text("t")),
        assistant(text("x"), use("a"), use("b")),
        user(text("before"), result("zz", "unknown"), result("b", "B1"), result("a", "A"), text("after"), result("b", "B2")),
    ]
    out = ensure_tool_results_follow_tool_use(msgs)
    assert out[2]["content"] == [result("a", "A"), result("b", "B2"), text("before"), text("after")]


def test_plain_string_reply_is_kept_after_the_results():
    msgs = [user("t"), assistant(use("a")), user("stop, do it differently")]
    out = ensure_tool_results_follow_tool_use(msgs)
    assert out[2]["content"] == [result("a", RESULT_MISSING), text("stop, do it differently")]
    out = ensure_tool_results_follow_tool_use([user("t"), assistant(use("a")), user("")])
    assert out[2]["content"] == [result("a", RESULT_MISSING)]


def test_trailing_tool_use_left_alone():
    msgs = [user("t"), assistant(use("a"))]
    assert ensure_tool_results_follow_tool_use(msgs) == msgs


def test_valid_pairs_are_untouched_and_shared():
    msgs = [user("t"), assistant(use("a"), use("b")), user(result("a"), result("b"), text("x")), assistant("ok")]
    out = ensure_tool_results_follow_tool_use(msgs)
    assert out == msgs and all(a is b for a, b in zip(out, msgs, strict=False))


def test_results_without_a_tool_use_are_dropped_anywhere():
    msgs = [user("t"), assistant("no tools"), user(result("a", "A"), text("hi")), assistant("ok"), user(result("b"))]
    out = ensure_tool_results_follow_tool_use(msgs)
    assert out[2]["content"] == [text("hi")]
    assert out[4]["content"] == [text(ORPHANED_RESULTS_NOTICE)]
    assert history_problems(out) == []


def test_results_gathered_from_a_run_of_user_messages():
    msgs = [user("t"), assistant(use("a")), user(text("note")), user(result("a", "A"))]
    out = ensure_tool_results_follow_tool_use(msgs)
    assert out[2]["content"] == [result("a", "A"), text("note")]
    assert out[3]["content"] == [text(ORPHANED_RESULTS_NOTICE)]
    assert history_problems(out) == []


def test_tool_use_followed_by_assistant_gets_missing_results_between():
    msgs = [user("t"), assistant(use("a")), assistant("more"), user("x")]
    out = ensure_tool_results_follow_tool_use(msgs)
    assert out[2] == user(result("a", RESULT_MISSING))
    assert out[3:] == msgs[2:]
    assert history_problems(out) == []


def test_ensure_is_pure():
    msgs = [user("t"), assistant(use("a"), use("b")), user(result("b"), text("x"))]
    before = copy.deepcopy(msgs)
    ensure_tool_results_follow_tool_use(msgs)
    assert msgs == before


# -- the manager's incremental build -------------------------------------------------------------


def test_incremental_build_matches_the_pure_function():
    """Growing, replacing, rolling back in place and re-growing: the memoised build always equals
    a fresh build, and hands out a new list each time."""
    from nbagent.engine.context.updates import EditType

    cm = ContextManager()
    h = chat(2)
    cm.updates.add(7, 0, 1, "an update for a message that does not exist yet", edit_type=EditType.READ_FILE_TOOL)

    def check(rng=None):
        got = cm.get_truncated_messages(h, rng)
        assert got == get_truncated_messages(h, rng, cm.updates)
        assert history_problems(got, allow_trailing_tool_use=True) == []
        got.append("caller's own change")  # must not leak into the next build
        return got

    check()
    for i in range(6):
        h.append(user(text(f"q{i}")))
        check()
        h.append(assistant(text("a"), use(f"t{i}")))  # a trailing tool_use...
        check()
        h.append(user(result(f"t{i}", "r"), text("more")))  # ...answered in the next message
        check()
        h.append(assistant(text("done")))
        check((2, 3))
    h[9] = user(text("replaced in place"))  # same length, a middle message swapped
    check()
    del h[12:]  # rollback in place
    check()
    h += [user(text("new")), assistant(text("x"))]
    check()
    h[-2] = {**h[-2], "content": [text("edited last prompt")]}
    check()
