"""A replayed turn whose session the notebook's code makes with other settings than the record's
(``magics.new_session(context_window=6000)`` where 4,000 was recorded): its answer is the recorded
settings' (the turn table's window, what was truncated), so the replay names the change and the
replay policy applies (notebook 02 edited by a teacher replayed the old window's numbers silently).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ...engine.disk.persist import read_json
from .replay import sessions_dir

if TYPE_CHECKING:
    from ..magics_api import MagicsApi
    from .decisions import Replay

_RECORDED: dict[str, tuple[tuple[int, int], list[object]]] = {}  # requests.json by path: (mtime, size), its rows


def _recorded_request(root: Path, session: str, turn: int) -> dict[str, object] | None:
    """The first request ``turn`` of the recorded ``session`` sent, as its ``requests.json`` has it."""
    path = sessions_dir(root) / session / "requests.json"
    try:
        stat = path.stat()
        key = (stat.st_mtime_ns, stat.st_size)
        cached = _RECORDED.get(str(path))
        if cached is None or cached[0] != key:
            rows = read_json(path)
            cached = _RECORDED[str(path)] = (key, rows if isinstance(rows, list) else [])
    except (OSError, ValueError):
        return None
    return next((r for r in cached[1] if isinstance(r, dict) and r.get("turn") == turn), None)


def settings_changed(magics: "MagicsApi", decision: Replay) -> list[str]:
    """What the session the notebook's code made (``magics.new_session(context_window=6000)``) sets
    otherwise than the recorded turn was sent with: its context window, its model. Its answer (the
    turn table's window, what was truncated) is that of the recorded settings, so a teacher who
    changed the window must not see the old one's numbers replayed as if nothing changed. Only the
    code's own session is compared: one the replay loaded has the record's settings anyway."""
    link, current = magics.document, magics.current
    if current is None or decision.notebook is not None:
        return []
    made_by_code = current is link.code_session or (
        current is link.session_at_replay and current.turn == 0 and current is not link.loaded)
    recorded = _recorded_request(link.root, decision.session, decision.turn) if made_by_code else None
    if recorded is None:
        return []
    changed = []
    window, model = recorded.get("context_window"), recorded.get("model")
    if isinstance(window, int) and window != current.agent.context_window:
        changed.append(f"the session's context window ({current.agent.context_window:,} now, {window:,} when "
                       "recorded)")
    if isinstance(model, str) and not same_model(model, current.agent.config.model):
        changed.append(f"the session's model ({current.agent.config.model} now, {model} when recorded)")
    return changed


def same_model(recorded: str, asked: str) -> bool:
    """Whether the model a record names (as the API answered: a dated id for an alias asked) is the
    one the session asks for: the same id, a dated id of it, or the same model by alias."""
    from ...engine.api_facts.models import get_model

    base, _, date = recorded.rpartition("-")
    if recorded == asked or (base == asked and date.isdigit() and len(date) == 8):
        return True
    info = get_model(asked)
    return info is not None and info == get_model(recorded)


__all__ = ["same_model", "settings_changed"]
