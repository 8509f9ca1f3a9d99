"""A replayed cell's ``--allow`` holds in the folder its turn was recorded in only.

A live turn whose options allow tools records ``allowed_in``, an HMAC of the folder's real path
under your key (:mod:`nbagent.engine.disk.user_key`), inside its signed options; a replay carries
the ``--allow`` only where that mark is the current folder's, as ``session.json``'s "Allow always"
answers are bound to their folder (:mod:`nbagent.engine.state.grants`). A leaf module: the record
keeper (:mod:`.recording`) and the replay (:mod:`.replayed`) both use it, and it imports neither
(through :mod:`.replayed_options` the record keeper imported the document link back).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ...engine.contracts.json_types import JSONObject

_FOLDER_PURPOSE = "nbagent replayed allow folder v1"
HERE = "allowed_in"
"""The options' key binding a cell's ``--allow`` to the folder its turn was recorded in (an HMAC of
that folder's real path under your key: the path itself is not written into a notebook you share)."""

ALLOW_ELSEWHERE_LINE = ("ⓘ this cell's recorded answer was made in another folder (a copy of your project, or "
                        "one you moved), so its --allow is not carried to your next prompt here, as an \"Allow "
                        "always\" is not: those tools ask. Run the cell with --live once to record it here.")


ALLOW_UNBOUND_LINE = ("ⓘ this cell's recorded answer was made before nbagent bound a record's --allow to its folder, "
                      "so its --allow is not carried to your next prompt: those tools ask. Run the cell with --live "
                      "once to record it here.")


def _folder_mark(root: "Path") -> str | None:
    from ...engine.disk.user_key import sign

    return sign(_FOLDER_PURPOSE, str(Path(root).resolve()))


def recorded_here(root: "Path", options: "JSONObject | None") -> "JSONObject | None":
    """``options`` (a live turn's, to be signed with its record) bound to ``root`` where they
    allow tools: a record of yours published with your project (its ``.nbagent/``, or the notebook
    carrying it), copied into another project beside a history someone else wrote, kept your
    ``--allow python`` for the prompt that continued it there; ``session.json``'s "Allow always"
    answers were bound to their folder for that very reason (:mod:`nbagent.engine.state.grants`)."""
    if not options or not options.get("allow"):
        return options
    mark = _folder_mark(root)
    return {**options, HERE: mark} if mark is not None else options


def allowed_here(root: "Path", options: "JSONObject | None") -> bool:
    """Whether a signed record's ``--allow`` (its ``options``) was recorded in ``root``."""
    mark = options.get(HERE) if options else None
    return isinstance(mark, str) and mark == _folder_mark(root)


def not_carried_line(root: "Path", options: "JSONObject | None") -> str | None:
    """Why a signed record's ``--allow`` is not carried in ``root`` (None: it is): recorded in another
    folder, or before records held the mark (an update's first Run All, in the very folder: told
    "another folder", the user looked for a copy or a move that never happened)."""
    if allowed_here(root, options):
        return None
    return ALLOW_ELSEWHERE_LINE if options and HERE in options else ALLOW_UNBOUND_LINE


__all__ = ["ALLOW_ELSEWHERE_LINE", "ALLOW_UNBOUND_LINE", "HERE", "allowed_here", "not_carried_line", "recorded_here"]
