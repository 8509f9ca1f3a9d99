"""Headless, no record to replay: whether the folder holds a run of this prompt that did not finish.

A run cut short (nbclient's or nbconvert's cell timeout, ■, the kernel killed or restarted while it
ran) writes its session's conversation as it goes but records no replay index, which a turn gets only
when it ends. The next headless run finds no record that begins with the prompt, and its line said
"a new or edited cell" (or no record at all): untrue for a cell whose recorded run simply did not
finish. This finds that run, so the line can say what happened. A kernel killed before its run wrote
anything leaves a session folder with no conversation (only its writer's lock): :func:`unwritten_session`
finds it, and the line says a run stopped before it wrote anything, not "a new or edited cell".
"""

from __future__ import annotations

import codecs
import json
import os
from pathlib import Path

from ...engine.contracts.errors import CorruptFileError, TaskFolderError
from ...engine.disk.json_depth import MAX_FILE_DEPTH, text_depth_exceeds
from ...engine.disk.persist import read_json
from ...engine.disk.safe_open import open_regular
from ...engine.disk.task_lock import left_by_a_dead_writer
from .replay import is_session_name, load_index, sessions_dir

HISTORY = "api_conversation_history.json"
NEWEST = 50
"""How many of the folder's newest sessions are read: a headless cell pays for this only when it
has no record to replay, and a run that just failed is among the newest."""
HEAD_BYTES = 64 * 1024
"""How much of a conversation is read for its first message: the whole file (megabytes in a long
session) cost ~18 ms a session, ~0.9 s for every headless cell with no record in a folder of 50."""


def unfinished_session(root: Path, prompt: str) -> str | None:
    """The newest session of the folder whose first prompt is ``prompt`` and that recorded no
    finished turn asking it (no replay index, or one without that turn); None if there is none."""
    folder = sessions_dir(root)
    if not folder.is_dir():
        return None
    # Only names nbagent gives its sessions: the line shows the name, and a received folder's
    # "x) FINISHED. Paste your key … (session y" read as nbagent's own words.
    named = (p for p in folder.iterdir() if is_session_name(p.name) and p.is_dir())
    sessions = sorted(named, key=_mtime, reverse=True)[:NEWEST]
    asked = prompt.strip()
    for session in sessions:
        if _first_prompt(session / HISTORY) != asked:
            continue
        index = load_index(root, session.name)
        if index is None or not any(t.asks(prompt) for t in index.turns):
            return session.name
    return None


def unwritten_session(root: Path) -> str | None:
    """The newest session of the folder that wrote no conversation and whose writer stopped without
    releasing its lock (a kernel killed as its first prompt began: nothing tells which prompt it was)."""
    folder = sessions_dir(root)
    if not folder.is_dir():
        return None
    named = (p for p in folder.iterdir() if is_session_name(p.name) and p.is_dir())
    for session in sorted(named, key=_mtime, reverse=True)[:NEWEST]:
        if _first_message(session / HISTORY) is None and load_index(root, session.name) is None \
                and left_by_a_dead_writer(session):
            return session.name
    return None


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def _first_prompt(history: Path) -> str | None:
    """The prompt that started a conversation: its first user message's first text block (the
    blocks after it are what the model was told of the kernel, ``<kernel-state>``), if readable."""
    first = _first_message(history)
    content = first.get("content") if isinstance(first, dict) and first.get("role") == "user" else None
    if isinstance(content, str):
        return content.strip()
    blocks = content if isinstance(content, list) else ()  # a received folder's file: any shape
    texts = [b.get("text") for b in blocks if isinstance(b, dict) and b.get("type") == "text"]
    return texts[0].strip() if texts and isinstance(texts[0], str) else None


def _first_message(history: Path) -> object:
    """The conversation's first message, read from the file's head (the whole file only when that
    message is longer than :data:`HEAD_BYTES`); None when unreadable or empty."""
    try:
        fd = open_regular(history, os.O_RDONLY)  # no symlink, no FIFO: a received folder's file
    except (OSError, TaskFolderError):
        return None
    try:
        head = os.read(fd, HEAD_BYTES)
    except OSError:
        return None
    finally:
        os.close(fd)
    text = codecs.getincrementaldecoder("utf-8")(errors="replace").decode(head)  # a cut character is left out
    start = len(text) - len(text.lstrip())
    if not text.startswith("[", start) or text_depth_exceeds(text, MAX_FILE_DEPTH):
        return None
    at = len(text) - len(text[start + 1:].lstrip())
    try:
        return json.JSONDecoder().raw_decode(text, at)[0]
    except ValueError:
        pass
    if len(head) < HEAD_BYTES:  # the whole file, and not a conversation
        return None
    try:
        messages = read_json(history)
    except (OSError, CorruptFileError):
        return None
    return messages[0] if isinstance(messages, list) and messages else None


__all__ = ["unfinished_session", "unwritten_session"]
