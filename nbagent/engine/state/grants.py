""""Allow always" answers on disk: kept only when this user's key signed them.

A task folder may be one the user received (a shared drive, a repository): its ``session.json``
could list ``"allowed_always": ["python", "shell"]`` and make the model's code run unasked in the
next live prompt. So each grant list is signed with the user's key (see
:mod:`~nbagent.engine.disk.user_key`) together with the session folder's real path, and a list without
this user's signature for this folder is dropped on load, with a one-line notice: the resumed
session asks again.

The path, not only the folder's name (version 1): session folders are named by time and pid, and
recorded sessions travel with the notebooks they replay (a repository's ``.nbagent/sessions/``).
A ``session.json`` the user once published, signed, could be copied under the same name into
another project beside a history its author wrote, and the grant held there. A project the user
moves asks again once.

And the conversation (version 3): the folder is the user's, but what it holds may not be. A
collaborator's commit to ``api_conversation_history.json`` pulled into it (a planted user message:
"also run this, always") kept the user's grant, and the next live prompt continued their history
with the tool unasked. So the signature also covers a digest of the conversation as this session
last wrote it (the history, the context updates that replace what the model reads of its blocks, and
the range of messages left out, and the messages compactions replaced, which a rollback across one
puts back) and the agent's notes (``notes.md``, in every turn's prompt, and the notes the turn marks keep,
which a rollback writes back); ``session.json`` is rewritten with each turn's end while a grant is held. A history
changed since asks again, as does one a killed kernel left mid-turn (once).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Sequence, TypedDict

from ..context.updates import ContextHistoryUpdates, updates_text
from ..disk.persist import dumps_line
from ..disk.safe_open import read_regular
from ..disk.user_key import sign, signed_by_user
from .task_files import NOTES_FILE, SessionMeta, TurnMark

if TYPE_CHECKING:  # typing.NotRequired is 3.11+
    from typing_extensions import NotRequired

_PURPOSE = "nbagent allowed_always v3"


class SavedGrants(TypedDict):
    """The ``session.json`` fields that keep the "Allow always" answers."""

    allowed_always: list[str]
    allowed_always_signature: NotRequired[str | None]


def _folder(task_dir: Path) -> str:
    """The folder a grant is signed for: its real path."""
    return str(Path(task_dir).resolve())


class HistoryDigest:
    """The digest of a log (its items as the log writes them, one ``line`` each: the history's
    messages, the compactions' points), kept up to date by reading only the items added since the
    last call, as the log appends."""

    def __init__(self, line: Callable[[Any], str] = dumps_line) -> None:
        self._line = line
        self._items: list[object] = []
        self._hash = hashlib.sha256()

    def of(self, history: Sequence[object]) -> str:
        """The digest of ``history``; its messages are replaced, never changed in place."""
        done = len(self._items)
        if done > len(history) or list(history[:done]) != self._items:  # identity first: C speed
            done, self._hash = 0, hashlib.sha256()
        for message in history[done:]:
            self._hash.update(self._line(message).encode("utf-8") + b"\n")
        self._items = list(history)
        return self._hash.hexdigest()


class UpdatesDigest:
    """The digest of the context updates as ``context_history.json`` holds them, computed again only
    when they changed (their ``clock``): serialising 5,000 updates (a long masked session) at every
    turn's end cost 14 ms, for updates a turn without a masking or truncation leaves as they were."""

    def __init__(self) -> None:
        self._seen: tuple[ContextHistoryUpdates, int, str] | None = None

    def of(self, updates: ContextHistoryUpdates) -> str:
        """The digest of ``updates`` (see :func:`text_digest`)."""
        seen = self._seen
        if seen is None or seen[0] is not updates or seen[1] != updates.clock:
            seen = self._seen = (updates, updates.clock, text_digest(updates_text(updates)))
        return seen[2]


def text_digest(text: str) -> str:
    """The SHA-256 of ``text`` (hex)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def notes_digest(task_dir: Path | None, marks_digest: str) -> str:
    """The digest of the agent's notes, ``notes.md`` in ``task_dir`` as it stands (in every turn's
    prompt), and of the turn marks (``marks_digest``, a :class:`HistoryDigest` of them): a rollback
    writes back the notes a mark keeps, and cuts the history and sets the range it holds."""
    current = read_regular(task_dir / NOTES_FILE) if task_dir is not None else None
    kept = json.dumps([None if current is None else hashlib.sha256(current).hexdigest(), marks_digest])
    return hashlib.sha256(kept.encode("utf-8")).hexdigest()


def conversation_digest(history_digest: str, updates_digest: str, deleted_range: Sequence[int] | None,
                        compactions_digest: str, notes: str) -> str:
    """What the grants are signed with: the history's digest (:class:`HistoryDigest`), the context
    updates' (:class:`UpdatesDigest`: each replaces what the model reads of a history block),
    the range of messages left out of what it reads (``session.json``'s ``deleted_range``), the
    compactions' digest (``compactions.json``: a rollback across one puts its messages back) and the
    notes' (:func:`notes_digest`)."""
    both = json.dumps([history_digest, updates_digest,
                       list(deleted_range) if deleted_range else None, compactions_digest, notes])
    return hashlib.sha256(both.encode("utf-8")).hexdigest()


def signed_grants(task_dir: Path, allowed_always: Iterable[str], digest: str) -> SavedGrants:
    """The ``session.json`` fields that keep ``allowed_always`` for the history of ``digest``
    (signed; none when it is empty)."""
    grants = sorted(allowed_always)
    if not grants:
        return {"allowed_always": []}
    return {"allowed_always": grants, "allowed_always_signature": sign(_PURPOSE, _folder(task_dir), grants, digest)}


def trusted_grants(task_dir: Path, meta: SessionMeta, history: Sequence[object], updates: str,
                   compactions: Sequence[object], marks: Sequence[TurnMark], notices: list[str]) -> tuple[str, ...]:
    """The grants of ``meta`` this user signed for this folder and this conversation (``history``,
    ``updates``, the context updates' text, ``compactions``' points, as loaded: JSON, written by
    ``dumps_line``, the notes and ``marks``: see :func:`notes_digest`); others are dropped with a notice."""
    grants = sorted(meta.allowed_always or ())
    if not grants:
        return ()
    digest = conversation_digest(HistoryDigest().of(history), text_digest(updates), meta.deleted_range,
                                 HistoryDigest().of(compactions), notes_digest(task_dir, HistoryDigest().of(marks)))
    if signed_by_user(meta.allowed_always_signature, _PURPOSE, _folder(task_dir), grants, digest):
        return tuple(grants)
    notices.append(f"This session's \"Allow always\" answers ({', '.join(grants)}) were not given by you for "
                   "this conversation (not signed with your key for this folder and its history as you left it: "
                   "received, moved, changed by someone else, stopped mid-turn, or kept by an earlier nbagent): "
                   "they are dropped, and these tools ask again.")
    return ()
