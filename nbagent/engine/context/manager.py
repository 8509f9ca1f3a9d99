"""The context manager: what the model sees on the next request (``shared/spec/context-manager.md``).

Same as Cline's ContextManager (v3.89.2) where the spec says so: window sizes, truncation ranges,
when to truncate, stored timestamped updates and their notices. Better than Cline: nothing mutates
its arguments, file reads are found from nbagent's own tools instead of regexes, tool pairing is
repaired without losing the user's text, and a rollback acts on the live session.

This module is the public face; the parts live in ``window`` (arithmetic),
``updates`` (stored updates and their file), ``request`` (building a request) and
``file_reads`` (de-duplication).

Typical use, once per API request::

    result = manager.get_new_context_messages_and_metadata(
        history, session.deleted_range, previous_request, context_window=window)
    if result.updated_deleted_range:
        session.deleted_range = result.deleted_range   # persist at once
    send(result.truncated_messages)

On a context-window-exceeded error, :meth:`ContextManager.truncate_for_overflow` gives the
shortened request.

Rollback: every update is recorded at the timestamp given to the call that made it
(``previous_request.ts``, or ``ts`` for the notices). Timestamps must grow over a session; then
``truncate_context_history(mark)`` restores exactly the updates of every call made with a
timestamp ≤ ``mark``. nbagent's loop passes each request's own fresh timestamp as
``previous_request.ts``, so marking a turn with the timestamp of its last request and restoring the
history and range of that moment rebuilds exactly what the model saw then.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from ..contracts.messages import Message, is_text
from .file_reads import FileReadCache, deduplicate_file_reads, percent_saved
from .mask_index import ResultIndex
from .request import (
    ORPHANED_RESULTS_NOTICE,
    RESULT_MISSING,
    RequestMemo,
    build_request,
    ensure_tool_results_follow_tool_use,
    get_truncated_messages,
)
from .updates import (
    CONTEXT_HISTORY_FILE,
    CONTINUE_NOTICE,
    DUPLICATE_FILE_READ_NOTICE,
    TRUNCATION_NOTICE,
    ContextHistoryUpdates,
    ContextUpdate,
    EditType,
)
from .window import (
    ContextWindowInfo,
    DeletedRange,
    Keep,
    RangeLike,
    RequestUsage,
    get_context_window_info,
    get_next_truncation_range,
    normalize_range,
    should_compact_context_window,
    start_of_rest,
)

__all__ = [
    "CONTEXT_HISTORY_FILE",
    "CONTINUE_NOTICE",
    "DUPLICATE_FILE_READ_NOTICE",
    "FILE_READ_SAVING_THRESHOLD",
    "ORPHANED_RESULTS_NOTICE",
    "RESULT_MISSING",
    "TRUNCATION_NOTICE",
    "ContextHistoryUpdates",
    "ContextManager",
    "ContextResult",
    "ContextUpdate",
    "ContextWindowInfo",
    "DeletedRange",
    "EditType",
    "Keep",
    "RequestUsage",
    "ensure_tool_results_follow_tool_use",
    "get_context_window_info",
    "get_next_truncation_range",
    "get_truncated_messages",
    "should_compact_context_window",
]

# Cline's rule: if de-duplicating file reads saves this share of the characters, skip truncation.
FILE_READ_SAVING_THRESHOLD = 0.3
_FILE_READ_EDITS = (EditType.READ_FILE_TOOL, EditType.ALTER_FILE_TOOL, EditType.FILE_MENTION)


@dataclass(frozen=True)
class ContextResult:
    """The request to send and what the context manager decided for it.

    ``updated_deleted_range`` is True whenever truncation fired (as in Cline, even if the range
    could not grow); ``keep`` names the strategy that fired, else None; ``file_read_saving`` is
    the share of characters the file-read pass saved (None when it did not run).
    ``replaced_reads`` lists the history indices whose file reads this call replaced.
    """

    truncated_messages: list[Message]
    deleted_range: DeletedRange | None
    updated_deleted_range: bool
    keep: Keep | None
    file_read_saving: float | None
    replaced_reads: frozenset[int] = frozenset()


class ContextManager:
    """One per session: holds the session's :class:`ContextHistoryUpdates` and builds requests.

    It keeps nothing on disk itself: the :class:`~nbagent.engine.state.session.Session` that owns it
    saves ``context_history.json`` when a call reports a change.
    """

    def __init__(self, updates: ContextHistoryUpdates | None = None) -> None:
        self._updates = updates if updates is not None else ContextHistoryUpdates()
        self._memo = RequestMemo()
        self._reads = FileReadCache()
        self.results = ResultIndex()
        """The mask layer's index of the history's tool results (kept up to date per request)."""

    @property
    def updates(self) -> ContextHistoryUpdates:
        """The stored updates (read them; change them only through this manager)."""
        return self._updates

    # -- the per-request entry point ----------------------------------------------------------

    def get_new_context_messages_and_metadata(
        self,
        history: Sequence[Message],
        deleted_range: RangeLike,
        previous_request: RequestUsage | None,
        *,
        context_window: int | None,
    ) -> ContextResult:
        """The request for the next API call, truncating first if the previous one came close to
        the window.

        If the previous request's total reached ``max_allowed_size``: keep ``quarter`` when half of
        it still exceeds the limit, else ``half``. Superseded file reads after the range are
        replaced first (recorded at ``previous_request.ts``); when that saves at least 30% of the
        characters nothing is hidden, otherwise the truncation notice is added (once) and the
        range grows. ``history`` is never changed.
        """
        rng = normalize_range(deleted_range)
        keep: Keep | None = None
        saving: float | None = None
        replaced: frozenset[int] = frozenset()
        truncated = False
        if previous_request is not None:
            info = get_context_window_info(context_window)
            total = previous_request.total
            if total >= info.max_allowed_size:
                keep = "quarter" if total / 2 > info.max_allowed_size else "half"
                ts = previous_request.ts
                start_from = start_of_rest(rng)
                outcome = deduplicate_file_reads(history, start_from, self._updates, ts, cache=self._reads)
                replaced = outcome.replaced
                saving = (
                    percent_saved(history, start_from, self._updates, outcome.characters_saved,
                                  memo=self._memo, cache=self._reads)
                    if replaced else 0.0
                )
                if saving >= FILE_READ_SAVING_THRESHOLD:
                    keep = None
                else:
                    self._add_truncation_notice(ts, history)
                    rng = get_next_truncation_range(history, rng, keep)
                    truncated = True
        messages = build_request(history, rng, self._updates, self._memo)
        return ContextResult(messages, rng, truncated, keep, saving, replaced)

    def truncate_for_overflow(
        self, history: Sequence[Message], deleted_range: RangeLike, ts: float
    ) -> ContextResult:
        """Recovery after a context-window-exceeded error: hide three quarters of what follows
        the range (keep ``quarter``), add both notices (:meth:`apply_standard_truncation_notice`)
        at ``ts`` (the failed request's timestamp) and return the shortened request.

        The caller retries at once, and only once per request (api-request spec); if
        ``len(result.truncated_messages) <= 3`` the conversation cannot be shortened further.
        """
        rng = get_next_truncation_range(history, deleted_range, "quarter")
        self.apply_standard_truncation_notice(ts, history)
        messages = build_request(history, rng, self._updates, self._memo)
        return ContextResult(messages, rng, True, "quarter", None)

    def get_truncated_messages(
        self, history: Sequence[Message], deleted_range: RangeLike
    ) -> list[Message]:
        """The request for ``history`` with ``deleted_range`` hidden and this session's updates."""
        return build_request(history, deleted_range, self._updates, self._memo)

    # -- notices --------------------------------------------------------------------------------

    def apply_truncation_notice(self, ts: float, history: Sequence[Message] | None = None) -> bool:
        """Record the truncation notice for message 1 at ``ts``, once (no update for message 1 yet; with
        ``history``, only if message 1 has list content, and on its first text block, else block 0).
        Returns whether it was added."""
        return self._add_truncation_notice(ts, history)

    def apply_standard_truncation_notice(self, ts: float, history: Sequence[Message] | None = None) -> bool:
        """The context-window-exceeded variant: the truncation notice for message 1, and block 0 of
        message 0 becomes ``[Continue assisting the user!]`` (once). With ``history`` the latter is
        recorded only if that block is non-empty text; without it, it is recorded and applies only
        to a text block. Returns whether anything was added."""
        added = self._add_truncation_notice(ts, history)
        if 0 not in self._updates and (history is None or _task_starts_with_text(history)):
            self._updates.add(0, 0, ts, CONTINUE_NOTICE, edit_type=EditType.UNDEFINED)
            added = True
        return added

    def _add_truncation_notice(self, ts: float, history: Sequence[Message] | None) -> bool:
        if 1 in self._updates:
            return False
        if history is not None and not (len(history) > 1 and isinstance(history[1].get("content"), list)):
            return False
        block = _first_text_block(history[1]) if history is not None else 0
        self._updates.add(1, block, ts, TRUNCATION_NOTICE, edit_type=EditType.UNDEFINED)
        return True

    # -- rollback and persistence ---------------------------------------------------------------

    def truncate_context_history(self, ts: float) -> None:
        """Checkpoint rollback: drop every update newer than ``ts`` (strictly greater), then empty
        blocks and messages. Unlike Cline this acts on the live
        session, so the next request is exactly what the model saw at that point."""
        self._updates.truncate_after(ts)
        self._memo.clear()

    def replaced_reads(self) -> frozenset[int]:
        """History indices whose file reads are currently replaced by the duplicate-read notice."""
        return self._updates.indices_with_edit_type(*_FILE_READ_EDITS)

    def replace_updates(self, updates: ContextHistoryUpdates) -> None:
        """Start from ``updates`` (a loaded session's), forgetting what was built before."""
        self._updates = updates
        self._memo.clear()
        self._reads.clear()
        self.results.clear()


def _first_text_block(message: Message) -> int:
    """Where the truncation notice goes in message 1: its first text block (a thinking block that
    opens the message has no replaceable text and is passed back unchanged); block 0 when it has none."""
    content = message.get("content")
    for i, block in enumerate(content if isinstance(content, list) else ()):
        if is_text(block):
            return i
    return 0


def _task_starts_with_text(history: Sequence[Message]) -> bool:
    """Whether block 0 of message 0 is non-empty text (what the overflow notice may replace)."""
    content = history[0].get("content") if history else None
    if not isinstance(content, list) or not content:
        return False
    block = content[0]
    return is_text(block) and bool(block.get("text"))
