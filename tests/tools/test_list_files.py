"""list_files: glob semantics, skipped directories, .nbagentignore, the entry cap."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from nbagent.engine.contracts.json_types import JSONValue
from nbagent.engine.contracts.tool_api import ToolContext, ToolInput
from nbagent.tools import ListFiles
from nbagent.tools.ignore import IgnoreRules, parse_ignore


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    for rel in [
        "README.md", "setup.py", "src/pkg/__init__.py", "src/pkg/core.py", "src/pkg/data.csv",
        "src/pkg/__pycache__/core.cpython-311.pyc", ".git/HEAD", ".venv/lib/site.py",
        "notes/.hidden.py", "build/out.py", "logs/a.log", "logs/keep.log",
    ]:
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(rel)
    return tmp_path


async def listing(cwd: Path, **inp: JSONValue) -> list[str]:
    out = await ListFiles().run(dict(inp), ToolContext(cwd=cwd))
    assert not out.is_error, out.content
    assert isinstance(out.content, str)
    return out.content.splitlines()


async def test_default_lists_everything_but_junk(tree: Path) -> None:
    entries = await listing(tree)
    assert "README.md" in entries and "src/" in entries and "src/pkg/core.py" in entries
    assert "notes/.hidden.py" in entries
    assert not any(e.startswith((".git", ".venv")) or "__pycache__" in e for e in entries)
    assert entries == sorted(entries)


async def test_glob_patterns(tree: Path) -> None:
    assert await listing(tree, pattern="*.py") == ["setup.py"]
    assert await listing(tree, pattern="**/*.py") == [
        "build/out.py", "notes/.hidden.py", "setup.py", "src/pkg/__init__.py", "src/pkg/core.py",
    ]
    assert await listing(tree, pattern="src/*/c?re.py") == ["src/pkg/core.py"]
    assert await listing(tree, pattern="*.py", path="src/pkg") == ["src/pkg/__init__.py", "src/pkg/core.py"]
    assert await listing(tree, pattern="**/[cd]*", path="src") == ["src/pkg/core.py", "src/pkg/data.csv"]


async def test_nbagentignore(tree: Path) -> None:
    (tree / ".nbagentignore").write_text("# generated\nbuild/\n*.log\n!keep.log\n/setup.py\nsrc/pkg/data.*\n")
    entries = await listing(tree)
    assert "build/" not in entries and "build/out.py" not in entries
    assert "logs/a.log" not in entries and "logs/keep.log" in entries
    assert "setup.py" not in entries and "src/pkg/data.csv" not in entries
    assert "src/pkg/core.py" in entries and ".nbagentignore" in entries


def test_ignore_rules_directly() -> None:
    rules = IgnoreRules(parse_ignore("data/\n/top.txt\n*.tmp\n!important.tmp\n\n# c\n"))
    assert rules.ignored("data", is_dir=True) and not rules.ignored("data", is_dir=False)
    assert rules.ignored("top.txt", False) and not rules.ignored("sub/top.txt", False)
    assert rules.ignored("a/b/x.tmp", False) and not rules.ignored("a/important.tmp", False)
    assert rules.ignored(".git", True) and not rules.ignored(".git", False)


async def test_cap_with_a_note(tmp_path: Path) -> None:
    for i in range(30):
        (tmp_path / f"f{i:02d}.txt").write_text("x")
    tool = ListFiles()
    tool.max_entries = 10
    out = await tool.run({}, ToolContext(cwd=tmp_path))
    assert isinstance(out.content, str)
    lines = out.content.splitlines()
    assert lines[:10] == [f"f{i:02d}.txt" for i in range(10)]
    assert lines[10] == "[showing 10 of 30 entries; narrow the pattern or path to see the rest]"


async def test_symlinked_dirs_are_not_walked(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    cwd = tmp_path / "cwd"
    (outside / "deep").mkdir(parents=True)
    (outside / "deep" / "secret.txt").write_text("s")
    cwd.mkdir()
    (cwd / "link").symlink_to(outside)
    (cwd / "loop").symlink_to(cwd)
    entries = await listing(cwd)
    assert "link/" in entries and not any("secret" in e for e in entries)


async def test_errors_and_empty(tree: Path) -> None:
    ctx = ToolContext(cwd=tree)
    empty = await ListFiles().run({"pattern": "*.nothing"}, ctx)
    assert not empty.is_error and "No entries match" in empty.content
    cases: list[tuple[ToolInput, str]] = [
        ({"path": "README.md"}, "not a directory"),
        ({"pattern": "/etc/*"}, "must be relative"),
        ({"pattern": "../*"}, "must not contain '..'"),
        ({"path": "missing"}, "not a directory"),
    ]
    for inp, msg in cases:
        out = await ListFiles().run(inp, ctx)
        assert out.is_error and msg in out.content, inp


async def test_abort(tree: Path) -> None:
    abort = asyncio.Event()
    abort.set()
    out = await ListFiles().run({}, ToolContext(cwd=tree, abort=abort))
    assert out.is_error and "Aborted" in out.content
