"""Headless, no record to replay: whether the folder holds a run of this prompt that did not finish.

A run cut short (nbclient's or nbconvert's cell timeout, ■, the kernel killed or restarted while it
ran) writes its session's conversation as it goes but records no replay index, which a turn gets only
when it ends. The next headless run finds no record that begins with the prompt, and its line said
"a new or edited cell" (or no record at all): untrue for a cell whose recorded run simply did not
finish. This finds that run, so the line can say what happened.
"""

from __future__ import annotations

from pathlib import Path

from ...engine.contracts.errors import CorruptFileError
from ...engine.disk.persist import read_json
from .replay import load_index, sessions_dir

HISTORY = "api_conversation_history.json"
NEWEST = 50
"""How many of the folder's newest sessions are read: a headless cell pays for this only when it
has no record to replay, and a run that just failed is among the newest."""


def unfinished_session(root: Path, prompt: str) -> str | None:
    """The newest session of the folder whose first prompt is ``prompt`` and that recorded no
    finished turn asking it (no replay index, or one without that turn); None if there is none."""
    folder = sessions_dir(root)
    if not folder.is_dir():
        return None
    sessions = sorted((p for p in folder.iterdir() if p.is_dir()), key=_mtime, reverse=True)[:NEWEST]
    asked = prompt.strip()
    for session in sessions:
        if _first_prompt(session / HISTORY) != asked:
            continue
        index = load_index(root, session.name)
        if index is None or not any(t.asks(prompt) for t in index.turns):
            return session.name
    return None


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def _first_prompt(history: Path) -> str | None:
    """The text of a conversation's first user message (the prompt that started it), if readable."""
    try:
        messages = read_json(history)
    except (OSError, CorruptFileError):
        return None
    first = messages[0] if isinstance(messages, list) and messages else None
    content = first.get("content") if isinstance(first, dict) and first.get("role") == "user" else None
    if isinstance(content, str):
        return content.strip()
    texts = [b.get("text") for b in content or () if isinstance(b, dict) and b.get("type") == "text"]
    return "".join(t for t in texts if isinstance(t, str)).strip() if texts else None


__all__ = ["unfinished_session"]
