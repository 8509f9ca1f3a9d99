"""nbagent's own file reads during a live turn, kept out of the turn's record (:func:`unwatched`).

A module of its own, importing nothing of the package: :mod:`.headless` marks its reads with it, and
:mod:`.inputs` (which reaches :mod:`.headless` through :mod:`.made_cells`) reads the mark."""

from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Iterator

_busy = threading.local()


@contextmanager
def unwatched() -> Iterator[None]:
    """nbagent's own reads during a live turn (which notebook of the folder holds the executing
    cell) are not what the answer depended on: recorded, saving the notebook or editing another one
    of the folder would flag the answer as changed at every replay. Per thread; nests."""
    was = getattr(_busy, "on", False)
    _busy.on = True
    try:
        yield
    finally:
        _busy.on = was


def watching() -> bool:
    """Whether this thread's file opens count as the turn's (not inside :func:`unwatched`)."""
    return not getattr(_busy, "on", False)


__all__ = ["unwatched", "watching"]
