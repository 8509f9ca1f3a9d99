"""``python -m nbagent.kernel -f {connection_file}`` runs the kernel;
``python -m nbagent.kernel install [--user|--sys-prefix|--prefix P]`` installs its kernelspec.

The kernelspec does not start it with ``-m``: Python puts the working folder (the notebook's, which
may have come from anyone) first on ``sys.path`` for ``-m``, so a received folder holding an
``nbagent/`` or ``traitlets/`` package ran its code in the kernel as it started, when the notebook
was opened (or as a batch item's folder, under ``nbagent.batch --notebook``). Its ``-c`` line drops
that entry before importing anything, and :func:`_installed_first` keeps the folder IPython then adds
for the user's own modules behind the installed packages, which the warm-up and nbagent import
later (a ``mistune.py`` there ran when the kernel warmed up).
"""

from __future__ import annotations

import contextlib
import signal
import sys
from typing import Iterator


def main(argv: list[str] | None = None) -> int | None:
    """Dispatch to the installer or launch the kernel."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] == "install":
        from .install import main as install_main

        return install_main(args[1:])
    from ipykernel.kernelapp import IPKernelApp

    from .kernel import NbAgentKernel

    app = IPKernelApp.instance(kernel_class=NbAgentKernel)
    add_folder = app.init_path

    def init_path() -> None:
        # Right where IPython adds the folder: before the startup files, extensions and exec_lines
        # run. (A subclass of the app would rename its configuration: ``-f`` is IPKernelApp's alias.)
        add_folder()
        _installed_first()

    app.init_path = init_path  # type: ignore[method-assign]  # this instance only (see above)
    with _interrupts_to_the_main_thread():
        app.initialize(args)  # starts ipykernel's threads: iopub, heartbeat, control, shell channel
    app.start()
    return None


def _installed_first() -> None:
    """Move the working folder (``""``, which IPython puts before site-packages so that a notebook
    imports its own modules) to the end of ``sys.path``: the user's ``helpers.py`` still imports, but
    a ``pandas.py`` or ``mistune.py`` in a received folder no longer replaces the installed package
    that nbagent imports while it warms up or replays."""
    if "" in sys.path:
        sys.path.remove("")
        sys.path.append("")


@contextlib.contextmanager
def _interrupts_to_the_main_thread() -> Iterator[None]:
    """Threads started inside keep SIGINT blocked (a thread inherits its creator's signal mask), so
    an interrupt is delivered to the main thread, where cells run. One delivered to another thread
    only sets Python's flag, and a cell in ``time.sleep`` sees it when its sleep ends (a loaded test
    run once waited the whole 10 s)."""
    if not hasattr(signal, "pthread_sigmask"):  # Windows: interrupts are not signals there
        yield
        return
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


if __name__ == "__main__":
    sys.exit(main())
