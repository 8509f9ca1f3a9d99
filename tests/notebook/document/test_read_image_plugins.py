"""Reading a received notebook's image output runs none of the notebook folder's modules: Pillow
imports its format plugins the first time it cannot tell an image's format, and two of them try
``olefile``; where it is not installed, a received folder's ``olefile.py`` ran as the model (unasked)
read the notebook (attacker pass 19)."""

from __future__ import annotations

import base64
import sys
from pathlib import Path

import pytest

from nbagent.engine.contracts.tool_api import ToolContext
from nbagent.engine.loop.sanitize import Sanitizer
from nbagent.notebook.document.bridge import Bridge
from nbagent.notebook.document.tools import NotebookTools

from .fake_frontend import FakeFrontEnd

Image = pytest.importorskip("PIL.Image")


async def test_reading_an_image_of_no_known_format_imports_nothing_from_the_notebooks_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder, marker = tmp_path / "received", tmp_path / "ran.txt"
    folder.mkdir()
    (folder / "olefile.py").write_text(f"open({str(marker)!r}, 'a').write('olefile ')\nraise ImportError('x')\n")
    monkeypatch.chdir(folder)
    monkeypatch.setattr(sys, "path", [*sys.path, ""])  # as the nbagent kernel has it: behind the installed packages
    monkeypatch.setattr(Image, "_initialized", 0)  # as in a fresh kernel: the plugins not imported yet
    for name in [m for m in sys.modules if m == "olefile" or m.startswith(("PIL.FpxImagePlugin", "PIL.MicImagePlugin"))]:
        monkeypatch.delitem(sys.modules, name)
    not_an_image = base64.b64encode(b"\x00\x01 no format Pillow knows " * 40).decode()
    front = FakeFrontEnd([{"cell_type": "code", "source": "show()", "outputs": [
        {"output_type": "display_data", "data": {"image/png": not_an_image, "text/plain": "<Figure>"}, "metadata": {}}]}])
    read = {t.name: t for t in NotebookTools(front.connect(Bridge()), lambda: "S1").tools()}["notebook_read"]

    out = await read.run({}, ToolContext(cwd=folder, tool_use_id="toolu_1", redact=Sanitizer(()).redact))

    assert not out.is_error
    assert not marker.exists(), marker.read_text()
