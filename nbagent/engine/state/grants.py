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
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Iterable, TypedDict

from ..disk.user_key import sign, signed_by_user
from .task_files import SessionMeta

if TYPE_CHECKING:  # typing.NotRequired is 3.11+
    from typing_extensions import NotRequired

_PURPOSE = "nbagent allowed_always v2"


class SavedGrants(TypedDict):
    """The ``session.json`` fields that keep the "Allow always" answers."""

    allowed_always: list[str]
    allowed_always_signature: NotRequired[str | None]


def _folder(task_dir: Path) -> str:
    """The folder a grant is signed for: its real path."""
    return str(Path(task_dir).resolve())


def signed_grants(task_dir: Path, allowed_always: Iterable[str]) -> SavedGrants:
    """The ``session.json`` fields that keep ``allowed_always`` (signed; none when it is empty)."""
    grants = sorted(allowed_always)
    if not grants:
        return {"allowed_always": []}
    return {"allowed_always": grants, "allowed_always_signature": sign(_PURPOSE, _folder(task_dir), grants)}


def trusted_grants(task_dir: Path, meta: SessionMeta, notices: list[str]) -> tuple[str, ...]:
    """The grants of ``meta`` this user signed for this folder; others are dropped with a notice."""
    grants = sorted(meta.allowed_always or ())
    if not grants:
        return ()
    if signed_by_user(meta.allowed_always_signature, _PURPOSE, _folder(task_dir), grants):
        return tuple(grants)
    notices.append(f"This session's \"Allow always\" answers ({', '.join(grants)}) were not given by you "
                   "(not signed with your key for this folder: received, or moved since): they are dropped, and "
                   "these tools ask again.")
    return ()
