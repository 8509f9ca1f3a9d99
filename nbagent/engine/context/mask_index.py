"""The mask layer's view of the history, kept up to date per request instead of rebuilt.

Masking asks two things before every request: which old tool results it may clear (and how many
tokens that clears), and where the next masking will start (for the cache anchor). Answering them
from scratch walks every message and tokenises every result still whole: O(history) per request,
which made a 10,000-message session fifty times slower per request than a 100-message one.

:class:`ResultIndex` answers them from what changed since the last request:

* every ``tool_result`` of a user message is indexed once, with the name of its tool as known at
  that point of the history (what a walk from the start would find) and its token count, counted
  once when first needed;
* a *frontier* moves past results that can never be cleared again while nothing is undone
  (excluded, hidden by truncation, already replaced by an update, without text); after a masking
  every old result is replaced, so the next question starts near the newest results.

A change of the history other than an append (a rollback, a compaction, a prompt merged into the
last message) is found the way the request builder finds it (:class:`~.request.RequestMemo`):
the indexed messages are compared with the history by identity, at C speed; the index is then cut
back to the first message that differs. Undoing updates (a rollback), other updates, a moved
hidden range or other excluded tools send the frontier back to the start. The answers are the
ones :func:`~.mask.candidates` and :func:`~.mask.next_masking_start` give by a full walk (the
property test compares them on random sessions).
"""

from __future__ import annotations

from bisect import bisect_left
from typing import Sequence

from ..api_facts.tokens import count_text_tokens
from ..contracts.messages import Message, blocks, first_replaced, is_tool_result, is_tool_use, tool_result_text
from .updates import ContextHistoryUpdates
from .window import RangeLike, start_of_rest


class _Result:
    """One indexed tool result: where it is, its tool, and (once counted) its tokens."""

    __slots__ = ("message", "block", "tool", "tokens", "bound")

    def __init__(self, message: int, block: int, tool: str) -> None:
        self.message, self.block, self.tool = message, block, tool
        self.tokens: int | None = None  # counted when first needed (a result may never be a candidate)
        self.bound: int | None = None  # its text's UTF-8 bytes: no token is shorter than a byte


class ResultIndex:
    """The tool results of one session's history, indexed incrementally (see the module docstring)."""

    def __init__(self) -> None:
        self.clear()

    def clear(self) -> None:
        """Forget everything (the next call indexes the history again)."""
        self._refs: list[Message] = []  # the messages indexed (held: their identity is the check)
        self._names: dict[str, str] = {}  # tool_use id -> tool name, as of the last indexed message
        self._undo: dict[int, list[tuple[str, str | None]]] = {}  # message -> (id, name before it)
        self._results: list[_Result] = []
        self._starts: list[int] = []  # each result's message index (for bisect)
        self._front = 0  # results before it can never be cleared under ``_key``
        self._updates: ContextHistoryUpdates | None = None
        self._cuts = 0  # how many times the history changed other than by appends
        self._old_state: tuple[object, ...] = ()
        self._old_found: tuple[list[_Result], int, int] = ([], 0, 0)
        self._key: tuple[object, ...] = ()

    # ----- questions ----------------------------------------------------------------------------
    def old_results(self, history: Sequence[Message], updates: ContextHistoryUpdates, deleted_range: RangeLike,
                    exclude: tuple[str, ...], keep: int) -> list[tuple[int, int, str, int]]:
        """(message, block, tool, tokens) of each result masking may clear: older than the newest
        ``keep`` (replaced ones count towards it), after the hidden range, not replaced, not from an
        excluded tool, with text; oldest first."""
        return [(r.message, r.block, r.tool, self._tokens(r))
                for r in self._old(history, updates, deleted_range, exclude, keep)[0]]

    def old_tokens(self, history: Sequence[Message], updates: ContextHistoryUpdates, deleted_range: RangeLike,
                   exclude: tuple[str, ...], keep: int, at_least: int = 0) -> int:
        """The tokens of :meth:`old_results`, summed; when even their bytes are fewer than
        ``at_least``, that bound instead (nothing is tokenised: a token is at least one byte)."""
        found, bound = self._old(history, updates, deleted_range, exclude, keep)
        return bound if bound < at_least else sum(self._tokens(r) for r in found)

    def _old(self, history: Sequence[Message], updates: ContextHistoryUpdates, deleted_range: RangeLike,
             exclude: tuple[str, ...], keep: int) -> tuple[list[_Result], int]:
        """The results :meth:`old_results` lists, and their bytes summed."""
        start = self._sync(history, updates, deleted_range, exclude)
        cut = self._keep_cut(start, exclude, keep)
        # Until an update, a cut-back of the history or a moved frontier, the results found last
        # time still are; only those that left ``keep`` since are looked at.
        state = (updates.clock, self._key, self._front, self._cuts, keep)
        found, bound, done = self._old_found
        if self._old_state != state or cut < done:
            found, bound, done = [], 0, self._front
        found = list(found) if done < cut else found  # a list handed out before stays as it was
        for r in self._results[done:cut]:
            if r.message >= start and r.tool not in exclude and updates.latest(r.message, r.block) is None:
                size = self._bound(r)
                if size > 0:
                    found.append(r)
                    bound += size
        self._old_state, self._old_found = state, (found, bound, max(cut, done))
        return found, bound

    def _keep_cut(self, start: int, exclude: tuple[str, ...], keep: int) -> int:
        """Where the newest ``keep`` results masking may see begin (they stay whole)."""
        results, cut, kept = self._results, len(self._results), 0
        if not keep:
            return cut
        while cut > self._front:
            r = results[cut - 1]
            if r.message < start or r.tool in exclude:
                cut -= 1
                continue
            if kept == keep:
                return cut
            kept, cut = kept + 1, cut - 1
        return cut if kept == keep else self._front

    def next_start(self, history: Sequence[Message], updates: ContextHistoryUpdates, deleted_range: RangeLike,
                   exclude: tuple[str, ...]) -> int | None:
        """The message of the oldest result masking may clear, whatever ``keep`` leaves whole."""
        self._sync(history, updates, deleted_range, exclude)
        return self._results[self._front].message if self._front < len(self._results) else None

    # ----- keeping up -----------------------------------------------------------------------------
    def _sync(self, history: Sequence[Message], updates: ContextHistoryUpdates, deleted_range: RangeLike,
              exclude: tuple[str, ...]) -> int:
        """Index what changed in the history, move the frontier; returns the first visible index."""
        source = history if isinstance(history, list) else list(history)
        changed = first_replaced(source, self._refs)
        if changed is not None:
            self._cut(changed)
        for i in range(len(self._refs), len(source)):
            self._index(i, source[i])
        start = start_of_rest(deleted_range)
        key = (updates.dropped, start, exclude)
        if self._updates is not updates or self._key != key:  # something may be clearable again
            self._updates, self._key, self._front = updates, key, 0
        results = self._results
        while self._front < len(results):
            r = results[self._front]
            if not (r.message < start or r.tool in exclude or updates.latest(r.message, r.block) is not None
                    or self._bound(r) == 0):
                break
            self._front += 1
        return start

    def _index(self, i: int, message: Message) -> None:
        self._refs.append(message)
        user = message.get("role") == "user"
        for j, block in enumerate(blocks(message)):
            if is_tool_use(block):
                key = str(block.get("id"))
                self._undo.setdefault(i, []).append((key, self._names.get(key)))
                self._names[key] = str(block.get("name", ""))
            elif user and is_tool_result(block):
                self._results.append(_Result(i, j, self._names.get(str(block.get("tool_use_id")), "")))
                self._starts.append(i)

    def _cut(self, k: int) -> None:
        """Forget messages ``k`` on (the history changed there)."""
        for i in sorted((m for m in self._undo if m >= k), reverse=True):
            for key, before in reversed(self._undo.pop(i)):
                if before is None:
                    self._names.pop(key, None)
                else:
                    self._names[key] = before
        self._cuts += 1
        del self._refs[k:]
        first = bisect_left(self._starts, k)
        del self._results[first:], self._starts[first:]
        self._front = min(self._front, first)

    def _text(self, r: _Result) -> str:
        return tool_result_text(blocks(self._refs[r.message])[r.block], "\n")

    def _tokens(self, r: _Result) -> int:
        if r.tokens is None:
            r.tokens = count_text_tokens(self._text(r))
        return r.tokens

    def _bound(self, r: _Result) -> int:
        if r.bound is None:
            text = self._text(r)
            r.bound = len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))
        return r.bound


__all__ = ["ResultIndex"]
