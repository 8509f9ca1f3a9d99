"""Showing the model's code in a card runs none of the notebook folder's modules: pygments' HTML
formatter tries ``ctags`` as it is imported, and where that is not installed a received folder's
``ctags.py`` ran as the first card showed the model's code, before any click (attacker pass 19)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from nbagent.notebook.view.render import highlight

pytest.importorskip("pygments")


def test_highlighting_code_imports_nothing_from_the_notebooks_folder(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    folder, marker = tmp_path / "received", tmp_path / "ran.txt"
    folder.mkdir()
    (folder / "ctags.py").write_text(f"open({str(marker)!r}, 'a').write('ctags ')\nraise ImportError('x')\n")
    monkeypatch.chdir(folder)
    monkeypatch.setattr(sys, "path", [*sys.path, ""])  # as the nbagent kernel has it: behind the installed packages
    for name in [m for m in sys.modules if m == "ctags" or m.startswith("pygments.formatters")]:
        monkeypatch.delitem(sys.modules, name)  # as in a fresh kernel: the formatter not imported yet

    shown = highlight("import os\nos.remove('x')")

    assert "nbagent-code" in shown and "<span" in shown  # still highlighted
    assert not marker.exists(), marker.read_text()
