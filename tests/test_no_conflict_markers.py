"""No file of the project keeps a merge's conflict markers: a merge once committed both versions of a
docs/mcp.md paragraph between ``<<<<<<<`` and ``>>>>>>>``, rendered as they were on the page."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MARKER = re.compile(r"^(?:<{7}|={7}|>{7})(?: |$)", re.M)
SOURCES = ("README.md", "docs/**/*.md", "nbagent/**/*.py", "tests/**/*.py", "bench/**/*.py", "frontend/src/**/*.ts",
           "notebooks/**/*.ipynb", "Makefile", "pyproject.toml")


def test_no_file_keeps_a_merges_conflict_markers() -> None:
    files = {p for pattern in SOURCES for p in ROOT.glob(pattern) if p.is_file()}
    assert len(files) > 100  # the patterns found the project
    marked = [str(p.relative_to(ROOT)) for p in sorted(files) if MARKER.search(p.read_text(encoding="utf-8"))]
    assert marked == []
