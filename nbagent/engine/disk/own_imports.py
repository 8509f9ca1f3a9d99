"""nbagent's own imports never come from the notebook's folder.

The kernel works in the notebook's folder, which may have come from anyone, and IPython puts that
folder on ``sys.path`` (behind the installed packages) so that the user's ``import helpers`` works.
Python also looks there for every module the installed packages lack, and libraries try their
optional dependencies as they are imported: pandas tries ``pyarrow``, ``numexpr``, ``bottleneck``
and ``pytz``, httpx ``brotli``, aiohttp ``aiodns``. The warm-up imports pandas and the SDK as soon
as the page connects, so a received folder holding a ``pyarrow.py`` ran its code when the notebook
was only opened (attacker pass 19); so did a replayed agent cell that imported them first.

:func:`installed_only` marks the imports of one thread while nbagent's own code runs there: the
warm-up thread, the main thread while a prompt first imports what it needs or an ``%agent`` command
runs, the ``%agent serve`` server's thread, MCP's ``jsonschema`` import, Pillow's plugins (which a
read of an image output loads) and pygments' formatter (which a card showing code loads). A module
they would find in the working folder is not found (where the folder comes first, as IPython puts it
on other kernels, the installed one is taken). Nor one in the folder the kernel started in
(:func:`also_refuse`): where it is on ``sys.path`` by its absolute path (a cell's
``sys.path.append(os.getcwd())``, a launcher that leaves ``python -m``'s entry there), it stays there after
``%cd data``, and the folder's ``pyarrow.py`` ran when the warm-up imported pandas once the working folder
was another. Nor one in any ``sys.path`` entry that is not where installed modules are (:func:`_trusted`):
a relative one (``..``: a received ``../pyarrow.py``), or one a cell or the launcher added (the start
folder also after ``%reset -f``, which clears the ``_dh`` :func:`also_refuse` is told from).
Other threads, and the main thread while a cell's
code (the user's, or a tool call's you allowed) runs, import as Python does: the user's
``helpers.py`` still imports.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.abc
import os
import sys
import threading
from importlib.machinery import ModuleSpec, PathFinder
from types import ModuleType
from typing import AbstractSet, Iterator, Sequence

_marked = threading.local()
_install_lock = threading.Lock()
_also: set[str] = set()  # real paths of folders refused besides the working one (see also_refuse)


class FolderImportBlocked(ModuleNotFoundError):
    """A module nbagent's own imports would have taken from the notebook's folder."""


def also_refuse(folder: str) -> None:
    """nbagent's own imports refuse a module in ``folder`` too, wherever the working folder is
    (the kernel's start folder: the notebook's, on ``sys.path`` by absolute path in a python3 kernel)."""
    _also.add(os.path.realpath(folder))


def _in_folder(spec: ModuleSpec, folders: AbstractSet[str]) -> bool:
    """Whether ``spec`` is a module or package directly in one of ``folders``."""
    places = [os.path.dirname(spec.origin)] if spec.has_location and spec.origin else []
    places += [os.path.dirname(location) for location in spec.submodule_search_locations or ()]
    return any(os.path.realpath(place) in folders for place in places)


class _FolderFinder(importlib.abc.MetaPathFinder):
    """First on ``sys.meta_path``: on a marked thread, a top-level module is found by the finders
    after it, and refused when that is in the working folder."""

    nbagent_folder_finder = True
    """Marks every instance, also one of a reloaded copy of this module (``%autoreload``, ``importlib.reload``):
    two of them asking each other recursed without end, and every marked import failed."""

    def find_spec(self, fullname: str, path: Sequence[str] | None = None,
                  target: ModuleType | None = None) -> ModuleSpec | None:
        if path is not None or not getattr(_marked, "on", False):  # a submodule: its package's folder
            return None
        for finder in list(sys.meta_path):
            find = getattr(finder, "find_spec", None)
            if getattr(finder, "nbagent_folder_finder", False) or find is None:  # any copy of this one
                continue
            spec: ModuleSpec | None = find(fullname, path, target)
            if spec is not None:
                return _not_from_the_folder(fullname, spec, target)
        return None


def _not_from_the_folder(fullname: str, spec: ModuleSpec, target: ModuleType | None) -> ModuleSpec:
    """``spec``, or where it is in the working folder or another untrusted ``sys.path`` entry, the
    installed module of that name (IPython puts the folder first on other kernels), else
    :class:`FolderImportBlocked`."""
    refused, paths = _judged(tuple(sys.path), frozenset({os.path.realpath(os.curdir), *_also}),
                             _install_roots(), _named_folders())
    if not _in_folder(spec, refused):
        return spec  # also a module no sys.path entry holds: an editable install's import hook
    elsewhere = PathFinder.find_spec(fullname, list(paths), target)
    if elsewhere is None:
        raise FolderImportBlocked(f"No module named {fullname!r} (nbagent does not import it from the "
                                  "notebook's folder or a folder put on sys.path after Python started)",
                                  name=fullname)
    return elsewhere


@functools.lru_cache(maxsize=16)
def _judged(path: tuple[str, ...], folders: frozenset[str], roots: frozenset[str],
            named: frozenset[str]) -> tuple[frozenset[str], tuple[str, ...]]:
    """The refused folders and the trusted entries of ``sys.path`` ``path`` (the working folder and
    the :func:`also_refuse` ones among ``folders``). Cached: each marked import judged every entry
    again (a ``realpath`` each, three times), 0.6 ms an import, 165 ms of a warm-up's 123 imports
    (400 ms with a conda-sized ``sys.path``); what it depends on is the key."""
    trusted = {os.path.realpath(entry) for entry in path if _trusted(entry, roots, named)} - folders
    refused = folders | ({os.path.realpath(entry or os.curdir) for entry in path} - trusted)
    return frozenset(refused), tuple(entry for entry in path if os.path.realpath(entry or os.curdir) in trusted)


def _trusted(entry: str, roots: frozenset[str], named: frozenset[str]) -> bool:
    """Whether ``sys.path`` entry ``entry`` is where installed modules are: under one of ``roots``
    (Python's own folders and site-packages), or a folder that ``PYTHONPATH`` or a ``.pth`` file there
    (an editable install) names (``named``). Not a relative entry (``''``, ``..``), nor one a cell or
    a launcher added (the kernel's start folder)."""
    if not entry or not os.path.isabs(entry):
        return False
    real = os.path.realpath(entry)
    return any(real == root or real.startswith(root.rstrip(os.sep) + os.sep) for root in roots) or real in named


def _install_roots() -> frozenset[str]:
    """Python's prefixes and the site-packages folders (where ``pip install`` puts a module)."""
    return _roots_of((sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix, *_site_folders()))


@functools.lru_cache(maxsize=8)
def _roots_of(roots: tuple[str, ...]) -> frozenset[str]:
    return frozenset(os.path.realpath(root) for root in roots if root)


def _site_folders() -> tuple[str, ...]:
    import site

    folders = list(getattr(site, "getsitepackages", lambda: [])())
    if site.ENABLE_USER_SITE:
        folders.append(site.getusersitepackages())
    return tuple(folders)


def _named_folders() -> frozenset[str]:
    """Absolute folders named by ``PYTHONPATH`` (as Python started) and by the ``.pth`` files of site-packages."""
    return _named_in(_site_folders(), _start_pythonpath())


@functools.lru_cache(maxsize=1)
def _start_pythonpath() -> str:
    """``PYTHONPATH`` as this process started, which put its folders on ``sys.path``: not as a cell set it
    since (``os.environ["PYTHONPATH"] = os.path.abspath("..")``, for a subprocess, beside a
    ``sys.path.append``), which put a received ``../pyarrow.py`` among the trusted folders. Linux tells
    the start environment; elsewhere, the value as nbagent's first import check ran."""
    if sys.flags.ignore_environment:  # python -E / -I: Python did not read it
        return ""
    with contextlib.suppress(OSError):
        with open("/proc/self/environ", "rb") as start:
            for item in start.read().split(b"\0"):
                if item.startswith(b"PYTHONPATH="):
                    return os.fsdecode(item[len(b"PYTHONPATH="):])
            return ""
    return os.environ.get("PYTHONPATH", "")


@functools.lru_cache(maxsize=8)
def _named_in(site_folders: tuple[str, ...], pythonpath: str) -> frozenset[str]:
    """Read once per process (Python reads the ``.pth`` files only as it starts, too): each import's
    check read them all again, ~1.7 ms, a warm-up's hundred imports of pandas' dependencies."""
    named = pythonpath.split(os.pathsep)
    for folder in site_folders:
        with contextlib.suppress(OSError):
            for name in sorted(os.listdir(folder)):
                if name.endswith(".pth"):
                    with contextlib.suppress(OSError, UnicodeDecodeError), \
                            open(os.path.join(folder, name), encoding="utf-8") as lines:
                        named += [os.path.join(folder, line.strip()) for line in lines
                                  if line.strip() and not line.startswith(("#", "import"))]
    return frozenset(os.path.realpath(path) for path in named if path and os.path.isabs(path))


_FINDER = _FolderFinder()


@contextlib.contextmanager
def installed_only() -> Iterator[None]:
    """Imports of the current thread inside do not take a module from the working folder."""
    with _install_lock:
        if not any(getattr(finder, "nbagent_folder_finder", False) for finder in sys.meta_path):
            sys.meta_path.insert(0, _FINDER)
    before = getattr(_marked, "on", False)
    _marked.on = True
    try:
        yield
    finally:
        _marked.on = before


__all__ = ["FolderImportBlocked", "also_refuse", "installed_only"]
