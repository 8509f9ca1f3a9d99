"""Import what the first prompt needs on a daemon thread, once the kernel has answered its client.

Kernel start imports none of it (issue 28, P6), so without this the first ``%%agent`` of a kernel
paid for the SDK, the engine and the widgets (≈1.5 s) before its first visible text. Started by the
nbagent kernel after its first ``kernel_info`` reply, the imports overlap the user's first seconds
of reading and typing instead.

Why a thread is safe here: since Python 3.3 the import lock is per module, so a user cell that
imports something else does not wait for the thread; one that imports a module the thread is
importing waits only for that module, which it would have had to import anyway. What the user
pays is a share of the GIL while the thread runs (``bench/bench_first_text.py`` measures it).

Why automatic garbage collection is paused while it runs (:func:`fewer_collections`): the imports
create hundreds of thousands of long-lived objects (the SDK alone is ~3,000 modules of pydantic
models), and each of them counts toward the next collection, so the import triggered several full
collections over an ever larger heap, about a fifth of the warm-up's CPU time (measured: 1.6 s →
1.3 s of CPU to ready). On a busy machine the warm-up then still runs when the user's pause ends,
and the first prompt waits for the rest of the SDK import.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import logging
import os
import threading
from typing import Callable, Iterator

from ..engine.disk.own_imports import installed_only

# What a first ``%%agent`` imports beyond the magics (tests/notebook/test_warmup.py checks the list):
# the Agent and the engine, the provider (the Anthropic SDK, also used against the offline simulated
# API), the live view, its widgets and tables, the shell executor of the python tool, and the
# session's MCP settings; pandas for the table that ends the run.
MODULES = (
    "nbagent.agent",
    "nbagent.providers.anthropic",
    "nbagent.providers.simulated",
    "nbagent.notebook.executor",
    "nbagent.notebook.view",
    "nbagent.notebook.document.cell_run",  # the notebook link: bridge, cells, replay
    "nbagent.notebook.document.tools",
    "nbagent.notebook.document.materialise",
    "nbagent.notebook.document.made_cells",  # what a live turn records of the cells it made
    "nbagent.notebook.kernel_context.build",  # what the model is told about the kernel (pandas loads later)
    "nbagent.display.tables",
    "nbagent.tools.mcp.config",
    "mistune",  # the answer's Markdown renderer, imported by the first text push
)
LATER = ("pandas", "pandas.io.formats.html", "pandas.io.formats.string")  # the last two: the table as HTML
"""After the token encoding: the run table that ends the first answer needs pandas, its first text not."""
DISABLE_ENV = "NBAGENT_NO_WARMUP"
"""Set (to anything but empty) to skip the warm-up: the first prompt then imports on demand."""

_log = logging.getLogger(__name__)
_lock = threading.Lock()
_thread: threading.Thread | None = None


def start_once() -> threading.Thread | None:
    """Start the warm-up thread unless it was started before or is disabled; the thread, or ``None``."""
    global _thread
    if os.environ.get(DISABLE_ENV):
        return None
    with _lock:
        if _thread is not None:
            return None
        _thread = threading.Thread(target=import_all, name="nbagent-warmup", daemon=True)
        _thread.start()
        return _thread


def import_all(modules: tuple[str, ...] = MODULES, later: tuple[str, ...] = LATER) -> list[str]:
    """Import ``modules``, load the token counter's encoding (the first request counts tokens;
    reading cl100k is a file read and a parse), then import ``later``. Returns the steps that failed
    (logged, never raised: the first prompt tries again and reports the error where the user sees it)."""
    # installed_only: the working folder is the notebook's, and a received one's ``pyarrow.py`` ran as
    # pandas tried its optional dependencies, when the page connected (see :mod:`~nbagent.engine.disk.own_imports`).
    with fewer_collections(), installed_only():
        failed = [name for name in modules if not _step(name, importlib.import_module, name)]
        if not _step("encoding", _load_encoding):
            failed.append("encoding")
        return failed + [name for name in later if not _step(name, importlib.import_module, name)]


_imported = False


def imported() -> None:
    """The warm-up's imports, made now in this thread (once per kernel), where nbagent is about to
    need them: a prompt, a replayed cell or an ``%agent`` command that comes before the warm-up
    thread got there (Run All as the notebook opens, or no warm-up) imported pandas and the SDK
    itself, and their optional dependencies from the notebook's folder."""
    global _imported
    if not _imported:
        warming = _thread
        if warming is not None and warming is not threading.current_thread():
            warming.join()  # what it imports, the prompt needs anyway; two threads importing one chain may deadlock
        import_all()
        _imported = True


@contextlib.contextmanager
def fewer_collections() -> Iterator[None]:
    """No automatic garbage collection inside (see the module docstring): a first threshold of 0
    stops it without ``gc.disable()``, whose state belongs to the user. The thresholds are put back
    only if nobody changed them meanwhile (a user's ``gc.set_threshold`` in a cell wins)."""
    before = gc.get_threshold()
    paused = (0, *before[1:])
    gc.set_threshold(*paused)
    try:
        yield
    finally:
        if gc.get_threshold() == paused:
            gc.set_threshold(*before)


def _load_encoding() -> None:
    from ..engine.api_facts.tokens import encoding

    encoding()


def _step(what: str, action: Callable[..., object], *args: object) -> bool:
    try:
        action(*args)
    except Exception:
        _log.debug("nbagent warm-up: %s failed", what, exc_info=True)
        return False
    return True


__all__ = ["DISABLE_ENV", "LATER", "MODULES", "fewer_collections", "import_all", "imported", "start_once"]
