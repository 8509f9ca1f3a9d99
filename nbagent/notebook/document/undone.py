"""A rolled-back turn's record, re-signed with ``"undone": true`` in it (``%agent rollback``).

Its own module: :mod:`.removal` writes it, and :mod:`.embedded` (which reads records) imports,
through the cells it describes, :mod:`.removal` back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...engine.disk.user_key import sign, signed_by_user

if TYPE_CHECKING:
    from ...engine.contracts.json_types import JSONObject


def undone_record(record: object) -> JSONObject | None:
    """``record`` (a cell's, signed by this user) re-signed with ``"undone": true`` in it, for
    ``%agent rollback`` to write: the mark beside the record is not signed, and someone who took
    it out of a notebook sent without its folder revived the rolled-back answer as the user's own.
    None for a record that is not this user's (its mark alone says it was undone, as before)."""
    if not isinstance(record, dict):
        return None
    body = {k: v for k, v in record.items() if k != "signature"}
    if record.get("undone") is True or not signed_by_user(record.get("signature"), body):
        return None
    body["undone"] = True
    signature = sign(body)
    return {**body, "signature": signature} if signature is not None else None


__all__ = ["undone_record"]
