"""``%agent cost`` before this kernel's first agent cell, where only left-out earlier sessions exist."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from nbagent.notebook.document.earlier import Earlier
from nbagent.notebook.spend_commands import _earlier_only


def _magics(earlier: Earlier) -> Any:
    return SimpleNamespace(document=SimpleNamespace(earlier=lambda agent: earlier))


def test_only_unsigned_earlier_sessions_are_not_said_as_zero_spent() -> None:
    """An earlier session that billed requests but whose link this user's key did not sign is left
    out: cost said "spent $0.0000 in 0 request(s) (not added: 1 …)", a zero for money that was spent."""
    said = _earlier_only(_magics(Earlier(None, 1, ())))
    assert said is not None and "$0.0000" not in said, said
    assert said.startswith("no requests yet in this kernel\nnothing counted here (not added: 1 earlier session(s)"), said


def test_only_an_unreadable_index_is_not_said_as_zero_spent() -> None:
    said = _earlier_only(_magics(Earlier(None, 0, (".nbagent/replay/x.json (invalid JSON: …)",))))
    assert said is not None and "$0.0000" not in said and "left out: 1 replay index(es)" in said, said


def test_nothing_earlier_says_nothing() -> None:
    assert _earlier_only(_magics(Earlier())) is None
