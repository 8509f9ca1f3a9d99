"""nbagent's own imports never take a module from the working folder (a received notebook's)."""

from __future__ import annotations

import importlib
import os
import sys
import threading
from pathlib import Path
from typing import Iterator

import pytest

from nbagent.engine.disk import own_imports
from nbagent.engine.disk.own_imports import FolderImportBlocked, installed_only

PLANTED = "nbagent_test_planted_optional_dependency"
"""A module no install has: what a library tries as an optional dependency (pandas's ``pyarrow``)."""


@pytest.fixture
def received_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The working folder, on ``sys.path`` behind the installed packages as the nbagent kernel puts it,
    holding a module that writes ``ran.txt`` when it is imported."""
    folder = tmp_path / "received"
    folder.mkdir()
    (folder / f"{PLANTED}.py").write_text(f"open({str(folder / 'ran.txt')!r}, 'a').write('ran')\n")
    monkeypatch.chdir(folder)
    monkeypatch.setattr(sys, "path", [*sys.path, ""])
    yield folder
    sys.modules.pop(PLANTED, None)


def test_a_module_of_the_working_folder_is_not_imported_by_a_marked_thread(received_folder: Path) -> None:
    with installed_only(), pytest.raises(FolderImportBlocked) as caught:
        importlib.import_module(PLANTED)
    assert isinstance(caught.value, ModuleNotFoundError)  # what a library's ``except ImportError`` expects
    assert not (received_folder / "ran.txt").exists()


def test_the_warm_up_thread_does_not_import_from_the_working_folder(received_folder: Path) -> None:
    from nbagent.notebook import warmup

    failed = warmup.import_all(modules=(), later=(PLANTED,))
    assert failed == [PLANTED]
    assert not (received_folder / "ran.txt").exists()


def test_other_threads_and_the_code_after_still_import_the_users_modules(received_folder: Path) -> None:
    found: list[object] = []
    worker = threading.Thread(target=lambda: found.append(importlib.import_module(PLANTED)))
    with installed_only():  # only this thread is marked
        worker.start()
        worker.join()
    assert found and (received_folder / "ran.txt").read_text() == "ran"
    sys.modules.pop(PLANTED)
    importlib.import_module(PLANTED)  # unmarked again once the block is left
    assert (received_folder / "ran.txt").read_text() == "ranran"


def test_where_the_folder_comes_first_the_installed_module_is_taken(received_folder: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """On other kernels IPython puts the folder before site-packages: a module there named like an
    installed one (``colorsys.py``) is passed over for the installed one, not imported."""
    (received_folder / "colorsys.py").write_text(f"open({str(received_folder / 'ran.txt')!r}, 'a').write('ran')\n")
    monkeypatch.setattr(sys, "path", ["", *sys.path])
    monkeypatch.delitem(sys.modules, "colorsys", raising=False)
    with installed_only():
        module = importlib.import_module("colorsys")
    assert Path(str(module.__file__)).parent != received_folder
    assert not (received_folder / "ran.txt").exists()


def test_marked_imports_still_work_after_the_module_is_reloaded(tmp_path: Path) -> None:
    """``%autoreload`` or ``importlib.reload`` of this module (in a subprocess: a reload here would
    replace the classes other tests hold) left two finders asking each other: a RecursionError."""
    import os
    import subprocess

    code = ("import importlib, sys\nfrom nbagent.engine.disk import own_imports\n"
            "with own_imports.installed_only(): pass\nimportlib.reload(own_imports)\n"
            "with own_imports.installed_only():\n    import colorsys\n"
            "print(sum(getattr(f, 'nbagent_folder_finder', False) for f in sys.meta_path))\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(Path(__file__).resolve().parents[3]),
                                                                     os.environ.get("PYTHONPATH")]))}
    run = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr[-1500:]
    assert run.stdout.strip() == "1"  # one finder on sys.meta_path


def _plant(folder: Path, name: str = PLANTED) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    ran = folder / "ran.txt"
    (folder / f"{name}.py").write_text(f"open({str(ran)!r}, 'a').write('ran')\n")
    return ran


@pytest.mark.parametrize("entry", ["..", "../", "lib"])
def test_a_module_in_a_relative_entry_of_sys_path_is_not_imported(tmp_path: Path, entry: str,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A received ``../pyarrow.py`` (or ``lib/pyarrow.py``) a cell put on ``sys.path`` as ``..``."""
    (tmp_path / "notebook").mkdir()
    ran = _plant(tmp_path / "lib" if entry == "lib" else tmp_path)
    monkeypatch.chdir(tmp_path / "notebook" if entry != "lib" else tmp_path)
    monkeypatch.setattr(sys, "path", [*sys.path, entry])
    monkeypatch.delitem(sys.modules, PLANTED, raising=False)
    with installed_only(), pytest.raises(FolderImportBlocked):
        importlib.import_module(PLANTED)
    assert not ran.exists()


def test_the_start_folder_on_sys_path_is_refused_after_cd_without_the_directory_history(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The launcher's absolute entry for the start folder, after ``%cd`` (and ``%reset -f``, which
    clears ``_dh``): nothing told :func:`also_refuse` about it."""
    ran = _plant(tmp_path / "start")
    (tmp_path / "data").mkdir()
    monkeypatch.chdir(tmp_path / "data")
    monkeypatch.setattr(sys, "path", [*sys.path, str(tmp_path / "start"), str(tmp_path / "elsewhere")])
    monkeypatch.delitem(sys.modules, PLANTED, raising=False)
    with installed_only(), pytest.raises(FolderImportBlocked):
        importlib.import_module(PLANTED)
    assert not ran.exists()


def test_a_module_in_site_packages_a_pth_folder_or_pythonpath_is_still_imported(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What the user installed: a site-packages folder, an editable install's ``.pth`` folder, PYTHONPATH."""
    import site

    site_packages, editable, named = tmp_path / "site-packages", tmp_path / "src", tmp_path / "named"
    for folder, name in ((site_packages, "nbagent_test_in_site"), (editable, "nbagent_test_editable"),
                         (named, "nbagent_test_pythonpath")):
        _plant(folder, name)
        monkeypatch.delitem(sys.modules, name, raising=False)
    (site_packages / "_editable_impl_x.pth").write_text(f"# editable\n{editable}\n")
    monkeypatch.setattr(site, "getsitepackages", lambda: [str(site_packages)])
    monkeypatch.setattr(own_imports, "_start_pythonpath", lambda: str(named), raising=False)  # as the kernel started
    monkeypatch.setenv("PYTHONPATH", str(named))  # (the code before rev-fx5 read it here)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [*sys.path, str(site_packages), str(editable), str(named)])
    with installed_only():
        for name in ("nbagent_test_in_site", "nbagent_test_editable", "nbagent_test_pythonpath"):
            importlib.import_module(name)
            sys.modules.pop(name)


def test_a_folder_a_cell_names_in_pythonpath_after_start_is_not_trusted(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """``os.environ["PYTHONPATH"] = os.path.abspath("..")`` (for a subprocess) beside ``sys.path.append``:
    Python read PYTHONPATH as it started, and so does the trusted list."""
    ran = _plant(tmp_path / "received")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PYTHONPATH", str(tmp_path / "received"))
    monkeypatch.setattr(sys, "path", [*sys.path, str(tmp_path / "received")])
    monkeypatch.delitem(sys.modules, PLANTED, raising=False)
    with installed_only(), pytest.raises(FolderImportBlocked):
        importlib.import_module(PLANTED)
    assert not ran.exists()


def test_sys_path_is_judged_once_not_at_each_import(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each marked import judged every ``sys.path`` entry again (a ``realpath`` each, three times): 165 ms
    of a warm-up's 123 imports, 400 ms with a conda-sized ``sys.path``."""
    from importlib.machinery import PathFinder

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [*sys.path, *(str(tmp_path / f"extra{i}") for i in range(30))])
    spec = PathFinder.find_spec("json")
    assert spec is not None
    own_imports._not_from_the_folder("json", spec, None)
    calls: list[str] = []
    realpath = os.path.realpath

    def counted(path: str, **kwargs: bool) -> str:
        calls.append(path)
        return realpath(path, **kwargs)

    monkeypatch.setattr(os.path, "realpath", counted)
    for _ in range(10):
        assert own_imports._not_from_the_folder("json", spec, None) is spec
    assert len(calls) < 10 * 5, len(calls)  # the working folder's, Python's prefixes: not each entry
