"""ContextManager: when to truncate, notices, rollback, the overflow helper and the file."""

from __future__ import annotations

import copy
import json
import os

import pytest

from nbagent.engine.context import (
    CONTEXT_HISTORY_FILE,
    CONTINUE_NOTICE,
    TRUNCATION_NOTICE,
    ContextHistoryUpdates,
    ContextManager,
    EditType,
    RequestUsage,
    get_next_truncation_range,
    get_truncated_messages,
)
from nbagent.engine.context.updates import load_updates, save_updates
from nbagent.engine.contracts.errors import CorruptFileError
from nbagent.engine.contracts.messages import MessageParam, history_problems
from tests.engine.context.test_context_support import assistant, chat, read_turn, result, text, use, user


def usage(ts: float, total: int) -> RequestUsage:
    # split across all four kinds so that the sum is what is compared
    return RequestUsage(ts, input_tokens=total - 30, output_tokens=10, cache_creation_input_tokens=10,
                        cache_read_input_tokens=10)


def test_no_previous_request_builds_without_truncating():
    cm, h = ContextManager(), chat(20)
    r = cm.get_new_context_messages_and_metadata(h, (2, 9), None, context_window=200_000)
    assert r.truncated_messages == h[:2] + h[10:]
    assert (r.deleted_range, r.updated_deleted_range, r.keep, r.file_read_saving) == ((2, 9), False, None, None)
    assert len(cm.updates) == 0


@pytest.mark.parametrize(
    ("window", "total", "keep"),
    [
        (200_000, 159_999, None),
        (200_000, 160_000, "half"),
        (200_000, 320_000, "half"),  # total / 2 == max: not greater
        (200_000, 320_001, "quarter"),
        (131_072, 104_857, None),
        (131_072, 104_858, "half"),
        (1_000_000, 959_999, None),
        (1_000_000, 960_000, "half"),
        (1_000_000, 1_920_001, "quarter"),
        (64_000, 37_000, "half"),
        (0, 98_000, "half"),
        (None, 97_999, None),
    ],
)
def test_when_to_truncate(window, total, keep):
    cm, h = ContextManager(), chat(20)
    r = cm.get_new_context_messages_and_metadata(h, None, usage(1, total), context_window=window)
    assert r.keep == keep
    assert r.updated_deleted_range is (keep is not None)
    if keep is None:
        assert r.deleted_range is None and r.truncated_messages == h
    else:
        assert r.deleted_range == get_next_truncation_range(h, None, keep)
        assert r.file_read_saving == 0.0
        assert r.truncated_messages[1]["content"][0]["text"] == TRUNCATION_NOTICE


def test_truncation_notice_added_once_at_first_timestamp():
    cm, h = ContextManager(), chat(40)
    r1 = cm.get_new_context_messages_and_metadata(h, None, usage(100, 170_000), context_window=200_000)
    r2 = cm.get_new_context_messages_and_metadata(h, r1.deleted_range, usage(200, 170_000), context_window=200_000)
    assert r1.deleted_range == (2, 39) and r2.deleted_range == (2, 59)
    assert [u.ts for u in cm.updates.block_updates(1)[0]] == [100]
    assert cm.updates.edit_type(1) == EditType.UNDEFINED
    assert 0 not in cm.updates  # only the overflow variant touches message 0


def test_manager_mutates_nothing():
    cm = ContextManager()
    h = chat(3) + read_turn("a", "f.py", "x" * 500) + read_turn("b", "f.py", "y" * 500) + [user(text("q"))]
    before = copy.deepcopy(h)
    rng = [2, 3]
    cm.get_new_context_messages_and_metadata(h, rng, usage(1, 200_000), context_window=200_000)
    cm.truncate_for_overflow(h, rng, 2)
    assert h == before and rng == [2, 3]


# -- file reads ----------------------------------------------------------------------------------

READ_CHARS = len("reading") + len("read_file") + len("a.py")  # the assistant message of read_turn


def test_duplicate_reads_save_enough_so_no_truncation():
    cm = ContextManager()
    h = [user(text("T")), assistant(text("A"))] + read_turn("r1", "a.py", "x" * 1000) + read_turn("r2", "a.py", "y" * 1000)
    r = cm.get_new_context_messages_and_metadata(h, None, usage(42, 170_000), context_window=200_000)
    from nbagent.engine.context import DUPLICATE_FILE_READ_NOTICE as N
    total = 1 + 1 + READ_CHARS + 1000 + READ_CHARS + 1000
    assert r.file_read_saving == pytest.approx((1000 - len(N)) / total)
    assert r.file_read_saving >= 0.3
    assert (r.keep, r.deleted_range, r.updated_deleted_range) == (None, None, False)
    assert r.replaced_reads == frozenset({3}) == cm.replaced_reads()
    assert r.truncated_messages[3]["content"] == [result("r1", N)]
    assert r.truncated_messages[5] is h[5]  # the last read is kept, and not copied
    assert cm.updates.edit_type(3) == EditType.READ_FILE_TOOL
    assert cm.updates.latest(3, 0).ts == 42
    assert 1 not in cm.updates  # no truncation, no notice


def test_small_saving_still_truncates_and_keeps_the_read_updates():
    cm = ContextManager()
    h = chat(20) + read_turn("r1", "a.py", "x" * 300) + read_turn("r2", "a.py", "y" * 300) + [assistant("k")]
    h += [user(text("long " * 400)), assistant(text("z"))]
    r = cm.get_new_context_messages_and_metadata(h, None, usage(7, 170_000), context_window=200_000)
    assert 0 < r.file_read_saving < 0.3
    assert r.keep == "half" and r.updated_deleted_range
    assert cm.replaced_reads() == {41}
    assert cm.updates.latest(1, 0).text == TRUNCATION_NOTICE


def test_negative_saving_when_the_notice_is_longer_than_the_file():
    cm = ContextManager()
    h = chat(2) + read_turn("r1", "a.py", "x") + read_turn("r2", "a.py", "y")
    r = cm.get_new_context_messages_and_metadata(h, None, usage(7, 170_000), context_window=200_000)
    assert r.file_read_saving < 0
    assert r.keep == "half"
    assert cm.replaced_reads() == {5}


def test_only_reads_after_the_range_count():
    cm = ContextManager()
    h = chat(2) + read_turn("r1", "a.py", "x" * 999) + [assistant("a")] + [user(text("q"))]
    h += read_turn("r2", "a.py", "y" * 999)[0:1] + [user(result("r2", "y" * 999))]
    # range hides the first read: only one read of a.py remains visible
    r = cm.get_new_context_messages_and_metadata(h, (2, 5), usage(7, 170_000), context_window=200_000)
    assert cm.replaced_reads() == frozenset()
    assert r.file_read_saving == 0.0


def test_paths_are_normalised_and_all_but_last_replaced():
    cm = ContextManager()
    h = chat(2) + read_turn("r1", "./src/a.py", "1" * 400) + read_turn("r2", "src/x/../a.py", "2" * 400)
    h += read_turn("r3", "src//a.py", "3" * 400) + read_turn("r4", "b.py", "4" * 400)
    cm.get_new_context_messages_and_metadata(h, None, usage(7, 170_000), context_window=200_000)
    assert cm.replaced_reads() == {5, 7}


def test_errors_and_unchanged_answers_are_not_reads():
    cm = ContextManager()
    h = chat(2) + read_turn("r1", "a.py", "1" * 400)
    h += [assistant(use("r2", "read_file", path="a.py")), user(result("r2", "no such file", is_error=True))]
    note = "a.py is unchanged since the read at turn 2; its content is in that earlier read_file result."
    h += [assistant(use("r3", "read_file", path="a.py")), user(result("r3", note))]
    cm.get_new_context_messages_and_metadata(h, None, usage(7, 170_000), context_window=200_000)
    assert cm.replaced_reads() == frozenset()


def test_partial_reads_only_superseded_by_whole_or_same_reads():
    cm = ContextManager()
    h = chat(2)
    h += read_turn("p1", "a.py", "1" * 400, offset=0, limit=10)
    h += read_turn("p2", "a.py", "2" * 400, offset=100, limit=10)
    h += read_turn("p3", "a.py", "3" * 400, offset=0, limit=10)  # same lines as p1
    cm.get_new_context_messages_and_metadata(h, None, usage(7, 170_000), context_window=200_000)
    assert cm.replaced_reads() == {5}  # only p1
    h += read_turn("w", "a.py", "4" * 400, offset=1)  # from line 1 to the end: the whole file
    cm.get_new_context_messages_and_metadata(h, None, usage(8, 170_000), context_window=200_000)
    assert cm.replaced_reads() == {5, 7, 9}


def test_write_and_edit_count_as_reads_in_the_order_they_ran():
    cm = ContextManager()
    h = chat(2) + read_turn("r1", "a.py", "old" * 200)
    # in one assistant message: the read runs first, then the write: the write is the latest
    h += [assistant(use("r2", "read_file", path="a.py"), use("w1", "write_file", path="a.py", content="new" * 200)),
          user(result("r2", "old" * 200), result("w1", "written"))]
    r = cm.get_new_context_messages_and_metadata(h, None, usage(7, 170_000), context_window=200_000)
    assert cm.updates.block_updates(5) and cm.updates.block_updates(7)
    assert cm.updates.latest(7, 0) is not None  # the read result r2 replaced
    assert 6 not in cm.updates  # the write (the last occurrence) kept
    # nbagent's edit_file answers with one line: that is not a read and supersedes nothing
    h += [assistant(use("e0", "edit_file", path="a.py", old="new", new="newer")),
          user(result("e0", "Edited a.py: replaced 1 occurrence at line 1."))]
    cm.get_new_context_messages_and_metadata(h, None, usage(8, 170_000), context_window=200_000)
    assert 6 not in cm.updates
    # an edit that returns the final content (several lines) supersedes the write's content
    h += [assistant(use("e1", "edit_file", path="a.py", old="new", new="newer")), user(result("e1", "newer\n" * 200))]
    r = cm.get_new_context_messages_and_metadata(h, None, usage(8, 170_000), context_window=200_000)
    assert cm.updates.edit_type(6) == EditType.ALTER_FILE_TOOL
    full = cm.get_truncated_messages(h, None)
    write_block = full[6]["content"][1]
    from nbagent.engine.context import DUPLICATE_FILE_READ_NOTICE as N
    assert write_block["input"] == {"path": "a.py", "content": N}
    assert history_problems(full) == [] and history_problems(r.truncated_messages) == []


def test_failed_write_is_not_a_read():
    cm = ContextManager()
    h = chat(2) + read_turn("r1", "a.py", "x" * 400)
    h += [assistant(use("w1", "write_file", path="a.py", content="y" * 400)), user(result("w1", "denied", is_error=True))]
    cm.get_new_context_messages_and_metadata(h, None, usage(7, 170_000), context_window=200_000)
    assert cm.replaced_reads() == frozenset()


def test_file_mentions_are_replaced_inside_their_tags():
    from nbagent.engine.context import DUPLICATE_FILE_READ_NOTICE as N
    from tests.engine.context.test_context_support import mention

    cm = ContextManager()
    first = "look: " + mention("a.py", "A1" * 200) + " and " + mention("b.py", "B1" * 200)
    h = chat(2) + [user(text("x"), text(first)), assistant("ok")]
    h += [user(text("again " + mention("a.py", "A2" * 200))), assistant("ok")]
    cm.get_new_context_messages_and_metadata(h, None, usage(7, 170_000), context_window=200_000)
    got = cm.get_truncated_messages(h, None)[4]["content"][1]["text"]
    assert got == "look: " + mention("a.py", N) + " and " + mention("b.py", "B1" * 200)
    assert cm.updates.latest(4, 1).metadata == (("a.py",), ("a.py", "b.py"))
    assert cm.updates.edit_type(4) == EditType.FILE_MENTION
    # b.py read again later: the same block is updated again, keeping the a.py replacement
    h += [user(text(mention("./b.py", "B2"))), assistant("ok")]
    cm.get_new_context_messages_and_metadata(h, None, usage(8, 170_000), context_window=200_000)
    got = cm.get_truncated_messages(h, None)[4]["content"][1]["text"]
    assert got == "look: " + mention("a.py", N) + " and " + mention("b.py", N)
    assert cm.updates.latest(4, 1).metadata == (("a.py", "b.py"), ("a.py", "b.py"))
    assert len(cm.updates.block_updates(4)[1]) == 2


def test_mention_in_string_content_counts_but_is_not_edited():
    from tests.engine.context.test_context_support import mention

    cm = ContextManager()
    h = chat(2) + [user(text(mention("a.py", "1" * 500))), assistant("ok"), user(mention("a.py", "2" * 500)), assistant("k")]
    r = cm.get_new_context_messages_and_metadata(h, None, usage(7, 170_000), context_window=200_000)
    assert cm.replaced_reads() == {4}
    assert r.truncated_messages[6] is h[6]


# -- rollback ------------------------------------------------------------------------------------


def _session(turns: int, window: int = 6_000):
    """A session where every request comes close to a small window: truncations and read updates."""
    cm = ContextManager()
    history: list[MessageParam] = chat(1)
    rng = None
    prev = None
    log = []
    for turn in range(turns):
        path = f"f{turn % 3}.py"
        history = history + [user(text(f"turn {turn}"))]
        ts = 1000 + turn
        r = cm.get_new_context_messages_and_metadata(history, rng, prev, context_window=window)
        rng = r.deleted_range
        log.append((len(history), rng, ts, copy.deepcopy(r.truncated_messages)))
        chars = sum(len(json.dumps(m)) for m in r.truncated_messages)
        prev = RequestUsage(ts, input_tokens=chars // 4, output_tokens=50)
        history = history + [assistant(text("reading"), use(f"t{turn}", "read_file", path=path))]
        history = history + [user(result(f"t{turn}", f"{turn}:" + "x" * 2500))]
        history = history + [assistant(text(f"done {turn}"))]
    return cm, history, log


def test_rollback_restores_exactly_the_earlier_request():
    cm, history, log = _session(30)
    assert any(r[1] is not None for r in log) and cm.replaced_reads()
    for n, rng, ts, request in reversed(log[1:]):
        # updates of request k are recorded at request k-1's timestamp
        cm.truncate_context_history(ts - 1)
        assert cm.get_truncated_messages(history[:n], rng) == request
        assert history_problems(request) == []


def test_truncate_context_history_drops_only_newer_updates():
    cm = ContextManager()
    up = cm.updates
    up.add(3, 0, 10, "a", edit_type=EditType.READ_FILE_TOOL)
    up.add(3, 0, 20, "b")
    up.add(3, 1, 30, "c")
    up.add(5, 0, 30, "d")
    cm.truncate_context_history(20)  # 20 is kept: strictly greater is dropped
    assert up.to_json() == [[3, [2, [[0, [[10, "text", ["a"], []], [20, "text", ["b"], []]]]]]]]
    cm.truncate_context_history(5)
    assert len(up) == 0


# -- overflow recovery ---------------------------------------------------------------------------


def test_truncate_for_overflow_quarter_and_both_notices():
    cm, h = ContextManager(), chat(20)
    r = cm.truncate_for_overflow(h, None, 99)
    assert (r.deleted_range, r.keep, r.updated_deleted_range) == ((2, 29), "quarter", True)
    assert r.truncated_messages[0]["content"][0]["text"] == CONTINUE_NOTICE
    assert r.truncated_messages[1]["content"][0]["text"] == TRUNCATION_NOTICE
    assert cm.updates.latest(0, 0).ts == 99
    # a second overflow adds nothing new but hides more
    r2 = cm.truncate_for_overflow(h, r.deleted_range, 100)
    assert r2.deleted_range == (2, 35)
    assert cm.updates.latest(0, 0).ts == 99


def test_overflow_leaves_an_empty_or_string_first_message_alone():
    h = [user(text("")), assistant(text("a"))] + chat(4)[2:]
    cm = ContextManager()
    assert cm.apply_standard_truncation_notice(1, h) is True  # the assistant notice
    assert 0 not in cm.updates
    h2 = [user("plain"), assistant(text("a"))] + chat(4)[2:]
    cm2 = ContextManager()
    cm2.truncate_for_overflow(h2, None, 1)
    assert 0 not in cm2.updates and 1 in cm2.updates


def test_the_truncation_notice_goes_in_the_text_after_a_thinking_block():
    # A 5.x model's answer opens with its thinking block: that has no replaceable text (and goes back
    # unchanged), so the notice replaces the first text block instead of being lost.
    thinking = {"type": "thinking", "thinking": "", "signature": "c2ln"}
    h = [user(text("the task")), assistant(thinking, text("a"), use("t1")), user(result("t1")),
         assistant(text("done"))] + chat(4)[2:]
    assert not history_problems(h)
    cm = ContextManager()
    r = cm.truncate_for_overflow(h, None, 1)
    first = r.truncated_messages[1]["content"]
    assert first[0] == thinking and first[1]["text"] == TRUNCATION_NOTICE
    assert cm.updates.latest(1, 1) is not None and cm.updates.latest(1, 0) is None
    no_text = [user(text("the task")), assistant(thinking, use("t1")), user(result("t1")), assistant(text("ok"))]
    cm2 = ContextManager()
    cm2.apply_truncation_notice(1, no_text)
    assert cm2.updates.latest(1, 0) is not None  # no text: block 0, as before


# -- persistence ---------------------------------------------------------------------------------


def test_save_load_round_trip_keeps_insertion_order(tmp_path):
    cm = ContextManager()
    cm.updates.add(9, 1, 5, "x", edit_type=EditType.FILE_MENTION, metadata=[["a"], ["a", "b"]])
    cm.updates.add(1, 0, 3, TRUNCATION_NOTICE)
    cm.updates.add(9, 0, 6, "y")
    path = save_updates(cm.updates, tmp_path)
    assert path == tmp_path / CONTEXT_HISTORY_FILE
    raw = json.loads(path.read_text())
    assert [entry[0] for entry in raw] == [9, 1]
    assert raw[0] == [9, [4, [[1, [[5, "text", ["x"], [["a"], ["a", "b"]]]]], [0, [[6, "text", ["y"], []]]]]]]
    assert load_updates(tmp_path) == cm.updates
    assert [p.name for p in tmp_path.iterdir()] == [CONTEXT_HISTORY_FILE]  # no temp file left


def test_load_without_file_means_no_updates(tmp_path):
    assert len(load_updates(tmp_path)) == 0


@pytest.mark.parametrize(
    "content",
    [
        b"{not json",
        b'{"a": 1}',
        b"[[1, [0, [[0, [[1, \"text\", [\"x\"]]]]]]]]",  # update with three fields
        b"[[\"1\", [0, []]]]",  # string index
        b"[[1, [0, [[0, [[true, \"text\", [\"x\"], []]]]]]]]",  # boolean timestamp
        b"\xff\xfe garbage",
    ],
)
def test_corrupt_file_names_the_file_and_is_left_untouched(tmp_path, content):
    path = tmp_path / CONTEXT_HISTORY_FILE
    path.write_bytes(content)
    with pytest.raises(CorruptFileError) as info:
        load_updates(tmp_path)
    assert str(path) in str(info.value) and info.value.path == path
    assert path.read_bytes() == content


def test_failed_write_leaves_the_old_file(tmp_path, monkeypatch):
    cm = ContextManager()
    cm.apply_truncation_notice(1)
    save_updates(cm.updates, tmp_path)
    before = (tmp_path / CONTEXT_HISTORY_FILE).read_bytes()

    def broken_fsync(fd):
        raise OSError("disk full")

    monkeypatch.setattr(os, "fsync", broken_fsync)
    cm.updates.add(4, 0, 2, "more")
    with pytest.raises(OSError):
        save_updates(cm.updates, tmp_path)
    assert (tmp_path / CONTEXT_HISTORY_FILE).read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == [CONTEXT_HISTORY_FILE]


def test_updates_from_json_rejects_bad_shapes():
    with pytest.raises(ValueError):
        ContextHistoryUpdates.from_json([[1, [0, [[0, "nope"]]]]])
    assert ContextHistoryUpdates.from_json([]) == ContextHistoryUpdates()


def test_as_of_is_a_non_destructive_rollback():
    cm, history, log = _session(20)
    n, rng, ts, request = log[10]
    snapshot = cm.updates.as_of(ts - 1)
    assert get_truncated_messages(history[:n], rng, snapshot) == request
    assert cm.updates != snapshot  # the live updates are unchanged


def test_null_file_is_corrupt(tmp_path):
    (tmp_path / CONTEXT_HISTORY_FILE).write_text("null")
    with pytest.raises(CorruptFileError):
        load_updates(tmp_path)
