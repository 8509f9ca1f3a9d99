"""An in-process IPython shell with nbagent loaded and no session: each test starts from nothing
(a session left by an earlier test in the same process would carry its secrets and settings)."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterator

from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output

from nbagent.notebook import magics as magics_mod


def forget_session(magics: Any) -> None:
    """Close the active session, if any, and forget it and its notebook document."""
    if magics.current is not None:
        magics.current.agent.close()
    magics.current, magics._document = None, None


@contextmanager
def shell_without_session() -> Iterator[tuple[Any, Any]]:
    """The shell and its magics after ``%load_ext nbagent``, no session before or after."""
    shell = InteractiveShell.instance()
    with capture_output():
        shell.run_cell("%load_ext nbagent")
    magics = magics_mod.active_magics()
    forget_session(magics)
    try:
        yield shell, magics
    finally:
        forget_session(magics)
