"""The README's screenshot is made from the static HTML ``make demo`` writes: the script finds the
agent cell of the README's question and the last cell the agent made, and shoots that region."""

from __future__ import annotations

import importlib.util
import struct
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "docs" / "img" / "readme_screenshot.py"
pytestmark = pytest.mark.skipif(not Path("/usr/bin/chromium").exists(), reason="needs /usr/bin/chromium")


def test_the_screenshot_spans_the_agent_cell_to_the_agents_last_cell(tmp_path: Path) -> None:
    pytest.importorskip("playwright")
    spec = importlib.util.spec_from_file_location("readme_screenshot", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    cell = '<div class="jp-Cell" style="height:{}px">{}</div>'
    html = tmp_path / "page.html"
    html.write_text("<html><body>" + "".join([
        cell.format(300, "intro"),
        cell.format(200, "%%agent Which region has the largest total revenue in `sales`?"),
        cell.format(100, 'sales.groupby("region")["revenue"].sum()'),
        cell.format(100, "sales.isna().sum()"),
        cell.format(400, "later"),
        '<script src="https://cdn.example.invalid/x.js"></script>']) + "</body></html>")
    png = module.shoot(html, tmp_path / "shot.png", width=600).read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", png[16:24])  # the IHDR chunk
    assert (width, height) == (600, 200 + 100 + 100 + 16)
