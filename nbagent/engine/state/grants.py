""""Allow always" answers on disk: kept only when this user's key signed them.

A task folder may be one the user received (a shared drive, a repository): its ``session.json``
could list ``"allowed_always": ["python", "shell"]`` and make the model's code run unasked in the
next live prompt. So each grant list is signed with the user's key (see
:mod:`~nbagent.engine.disk.user_key`) together with the session folder's name, and a list without
this user's signature is dropped on load, with a one-line notice: the resumed session asks again.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Iterable, TypedDict

from ..disk.user_key import sign, signed_by_user
from .task_files import SessionMeta

if TYPE_CHECKING:  # typing.NotRequired is 3.11+
    from typing_extensions import NotRequired

_PURPOSE = "nbagent allowed_always v1"


class SavedGrants(TypedDict):
    """The ``session.json`` fields that keep the "Allow always" answers."""

    allowed_always: list[str]
    allowed_always_signature: NotRequired[str | None]


def signed_grants(task_dir: Path, allowed_always: Iterable[str]) -> SavedGrants:
    """The ``session.json`` fields that keep ``allowed_always`` (signed; none when it is empty)."""
    grants = sorted(allowed_always)
    if not grants:
        return {"allowed_always": []}
    return {"allowed_always": grants, "allowed_always_signature": sign(_PURPOSE, task_dir.name, grants)}


def trusted_grants(task_dir: Path, meta: SessionMeta, notices: list[str]) -> tuple[str, ...]:
    """The grants of ``meta`` this user signed for this folder; others are dropped with a notice."""
    grants = sorted(meta.allowed_always or ())
    if not grants:
        return ()
    if signed_by_user(meta.allowed_always_signature, _PURPOSE, task_dir.name, grants):
        return tuple(grants)
    notices.append(f"This session's \"Allow always\" answers ({', '.join(grants)}) were not given by you "
                   "(not signed with your key): they are dropped, and these tools ask again.")
    return ()
