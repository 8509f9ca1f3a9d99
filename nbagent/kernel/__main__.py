"""``python -m nbagent.kernel -f {connection_file}`` runs the kernel;
``python -m nbagent.kernel install [--user|--sys-prefix|--prefix P]`` installs its kernelspec.

The kernelspec does not start it with ``-m``: Python puts the working folder (the notebook's, which
may have come from anyone) first on ``sys.path`` for ``-m``, so a received folder holding an
``nbagent/`` or ``traitlets/`` package ran its code in the kernel as it started, when the notebook
was opened (or as a batch item's folder, under ``nbagent.batch --notebook``). Its ``-c`` line takes
every entry naming that folder off ``sys.path`` before importing anything (:func:`_without_the_folder`,
as Jupyter's own ``ipykernel_launcher`` does): ``-c``'s ``''``, and the folder's own path, which an
empty ``PYTHONPATH`` entry adds (``export PYTHONPATH=$PYTHONPATH:/lib`` with none set). Sorted behind
the installed packages (the line before attacker pass 19, still in kernelspecs installed then), the
folder was still searched for every module they lack, and the start tries several (pathlib's
``ntpath`` tries ``nt``; ``colorama``, ``argcomplete``): a received ``nt.py`` ran as the notebook was
opened; so this module does it again before its own imports. IPython puts ``''`` back for the user's
own modules (``init_path``), which :func:`_installed_first` moves behind the installed packages (a
``mistune.py`` there ran when the kernel warmed up); what nbagent imports on its own later never
comes from it (:mod:`nbagent.engine.disk.own_imports`).
"""

from __future__ import annotations

import os
import sys


def _names_the_folder(entry: str) -> bool:
    """Whether a ``sys.path`` entry is the working folder (``""``, its path, or ``.`` from PYTHONPATH)."""
    return os.path.realpath(entry or os.curdir) == os.path.realpath(os.curdir)


def _without_the_folder() -> None:
    """Take the working folder off ``sys.path`` until IPython puts it back (``init_path``, before the
    startup files), as Jupyter's own ``ipykernel_launcher`` does. Behind the installed packages it
    was still searched for every module they lack, and the kernel's start tries several: pathlib's
    ``ntpath`` tries ``nt`` and ``_winapi`` (Windows' own), tornado ``colorama``, IPython
    ``argcomplete``, pickle ``org``: a received folder's ``nt.py`` ran as the notebook was opened
    (attacker pass 19)."""
    sys.path[:] = [entry for entry in sys.path if not _names_the_folder(entry)]


if sys.argv[:1] == ["-c"] or __name__ == "__main__":  # started as the kernel (the kernelspec's -c line, or -m)
    _without_the_folder()  # before any other import: a kernelspec installed before still sorts the folder last

import contextlib  # noqa: E402 - after the folder is off sys.path (above)
import signal  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import TYPE_CHECKING, Iterator  # noqa: E402

if TYPE_CHECKING:
    from ipykernel.kernelapp import IPKernelApp

OLD_KERNELSPEC = (
    "nbagent: this kernel was started with `python -m nbagent.kernel`, by a kernelspec older than "
    "nbagent's (or by hand): `-m` imports nbagent from the notebook's folder first, so a received "
    "folder holding an `nbagent/` package runs its code as the kernel starts. Reinstall the "
    "kernelspec: python -m nbagent.kernel install --user")


def main(argv: list[str] | None = None) -> int | None:
    """Dispatch to the installer or launch the kernel."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] == "install":
        from .install import main as install_main

        return install_main(args[1:])
    if Path(sys.argv[0]).name == "__main__.py":  # ``-m``: a kernelspec installed before the -c line
        print(OLD_KERNELSPEC, file=sys.stderr)
    _without_the_folder()  # ipykernel's own imports come from the installed packages, or from nowhere
    from ipykernel.kernelapp import IPKernelApp

    from .kernel import NbAgentKernel

    app = IPKernelApp.instance(kernel_class=NbAgentKernel)
    _folder_behind_installed(app)
    with _interrupts_to_the_main_thread():
        app.initialize(args)  # starts ipykernel's threads: iopub, heartbeat, control, shell channel
    app.start()
    return None


def _folder_behind_installed(app: IPKernelApp) -> None:
    """``app`` (this instance only: a subclass of the app would rename its configuration, and ``-f``
    is IPKernelApp's alias) puts the folder behind the installed packages right where IPython adds
    it (before the startup files, extensions and exec_lines run), and loads its extensions without
    it: IPython tries a default extension as a top-level module first (``storemagic``, before
    ``IPython.extensions.storemagic``), so a received folder's ``storemagic.py`` ran as the kernel
    started, the stock kernel's too (attacker pass 19)."""
    from ..engine.disk.own_imports import FolderImportBlocked, installed_only

    add_folder, load_extensions = app.init_path, app.init_extensions

    def init_path() -> None:
        add_folder()
        _installed_first()

    def init_extensions() -> None:
        assert app.shell is not None  # init_shell ran before (IPython's order)
        manager = app.shell.extension_manager
        load = manager.load_extension
        own = {*app.default_extensions, *_builtin_extensions()}

        def load_extension(name: str) -> object:
            try:
                with installed_only():  # IPython's own: the folder's module is not found, IPython falls back to its own
                    return load(name)
            except FolderImportBlocked:
                if name in own:
                    raise
            # The user's configured extension needs the folder (it is beside the notebooks, or installed
            # editable from there): loaded as Python finds it. Only then: an installed one's optional
            # modules were tried without the folder, else a received folder's ran as the kernel started.
            return load(name)

        manager.load_extension = load_extension  # type: ignore[method-assign]
        try:
            load_extensions()
        finally:
            del manager.load_extension  # the class's again (``%load_ext`` in a cell is the user's)

    app.init_path = init_path  # type: ignore[method-assign]
    app.init_extensions = init_extensions  # type: ignore[method-assign]


def _builtin_extensions() -> set[str]:
    """The short names IPython tries as a top-level module before its own ``IPython.extensions.<name>``
    (``storemagic``, ``autoreload``). Only these load without the folder at start: marking every
    configured extension stopped a user's own (``c.InteractiveShellApp.extensions = ["myext"]`` with
    ``myext.py`` beside the notebooks, or installed editable from there) from loading (review of
    attacker pass 19)."""
    from IPython.core import extensions

    return set(getattr(extensions, "BUILTINS_EXTS", ("storemagic", "autoreload")))


def _installed_first() -> None:
    """Move the working folder (``""``, which IPython puts before site-packages so that a notebook
    imports its own modules, or its path) to the end of ``sys.path``: the user's ``helpers.py`` still
    imports, but a ``pandas.py`` or ``mistune.py`` in a received folder no longer replaces the
    installed package that nbagent imports while it warms up or replays. (The kernelspec's ``-c``
    line does the same, written out there because it runs before nbagent is imported.)"""
    sys.path.sort(key=_names_the_folder)  # stable: every other entry keeps its order


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
