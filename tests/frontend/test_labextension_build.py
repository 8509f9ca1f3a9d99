"""The committed build of the front-end bridge (labextension/) matches its sources and is shipped.

pip installs the committed build, so a change to frontend/ without `make frontend` would ship the old
bridge silently; these tests catch that without node.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUILD = ROOT / "labextension"


def _stamp_module():
    spec = importlib.util.spec_from_file_location("frontend_stamp", ROOT / "frontend" / "stamp.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_committed_build_was_made_from_the_current_sources():
    stamp = _stamp_module()
    recorded = (BUILD / "sources.sha256").read_text().strip()
    assert recorded == stamp.digest(), "frontend/ changed since labextension/ was built: run `make frontend` and commit"


def test_a_source_change_changes_the_digest(tmp_path, monkeypatch):
    stamp = _stamp_module()
    copy = tmp_path / "frontend"
    (copy / "src").mkdir(parents=True)
    for path in stamp.sources():
        (copy / path.relative_to(stamp.FRONTEND)).write_bytes(path.read_bytes())
    monkeypatch.setattr(stamp, "FRONTEND", copy)
    before = stamp.digest()
    (copy / "src" / "index.ts").write_text((copy / "src" / "index.ts").read_text() + "\n// edited\n")
    assert stamp.digest() != before


def test_build_entry_point_exists_and_names_the_extension():
    meta = json.loads((BUILD / "package.json").read_text())
    source = json.loads((ROOT / "frontend" / "package.json").read_text())
    assert meta["name"] == source["name"] == "nbagent-bridge"
    assert (BUILD / meta["jupyterlab"]["_build"]["load"]).is_file()
    # `jupyter labextension list` shows it as installed by pip, with the package to uninstall.
    assert json.loads((BUILD / "install.json").read_text())["packageName"] == "nbagent"


def test_wheel_ships_the_build_where_jupyter_looks_for_prebuilt_extensions():
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    shared = project["tool"]["hatch"]["build"]["targets"]["wheel"]["shared-data"]
    assert shared["labextension"] == "share/jupyter/labextensions/nbagent-bridge"
