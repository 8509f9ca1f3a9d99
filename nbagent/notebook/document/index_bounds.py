"""The bounds of a replay index read (``.nbagent/replay/<session>.json``), checked before it is parsed.

A received folder may hold a file of a session's name made to cost: millions of ``[]`` (a few kB
zipped) took seconds and hundreds of MB per 10 MB to parse. An index nbagent writes is one object a
turn, its prompts' text in strings: the bounds are far above it and cost a count at C speed.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ...engine.contracts.errors import CorruptFileError, NbAgentError
from ...engine.disk.json_depth import containers_exceed
from ...engine.disk.safe_open import open_regular

MAX_INDEX_BYTES = 16 << 20
"""The largest replay index read: its prompts (a few kB each) a turn each; a hundred long pasted ones stay far below."""
MAX_INDEX_CONTAINERS = 250_000
"""The most arrays and objects an index read may hold (one a turn; brackets in its prompts are text, not
counted); the most costs ~0.2 s and ~30 MB to parse."""


def refuse_unparseable(path: Path) -> None:
    """Raise :class:`CorruptFileError` for an index no nbagent wrote, told before it is parsed: a
    received folder's file of a session's name holding millions of ``[]`` (a few kB zipped) took
    seconds and hundreds of MB per 10 MB to parse, up to the 256 MB any task file may have, at every
    first agent cell's lookup and every ``%agent cost``. Named as unreadable, as a damaged one is."""
    try:
        st = os.lstat(path)
    except OSError:
        return  # none (read_json says None), or read_json names why
    if not stat.S_ISREG(st.st_mode):
        return  # a link or a FIFO: read_json refuses it, never followed or opened blocking
    if st.st_size > MAX_INDEX_BYTES:
        raise CorruptFileError(path, f"larger than the {MAX_INDEX_BYTES:,} bytes a replay index holds")
    try:  # opened as read_json opens it (no link followed, a FIFO swapped in cannot block), counted at C speed
        fd = open_regular(path, os.O_RDONLY)
    except (OSError, NbAgentError):
        return
    try:
        raw = os.read(fd, MAX_INDEX_BYTES + 1)
    except OSError:
        return
    finally:
        os.close(fd)
    if containers_exceed(raw, MAX_INDEX_CONTAINERS):  # brackets in its strings (pasted JSON prompts) not counted
        raise CorruptFileError(path, f"more than {MAX_INDEX_CONTAINERS:,} arrays and objects, which no replay index holds")


__all__ = ["MAX_INDEX_BYTES", "MAX_INDEX_CONTAINERS", "refuse_unparseable"]
