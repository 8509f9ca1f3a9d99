"""The path sandbox: inside cwd or allowed_paths only, after resolving '..' and symlinks."""

from __future__ import annotations

from pathlib import Path

import pytest

from nbagent.engine.contracts.tool_api import Tool, ToolContext, ToolInput
from nbagent.tools import ListFiles, ReadFile, WriteFile
from nbagent.tools.paths import PathRefusedError, display_path, resolve_path


@pytest.fixture
def layout(tmp_path: Path) -> tuple[Path, Path]:
    cwd = tmp_path / "project"
    outside = tmp_path / "outside"
    cwd.mkdir()
    outside.mkdir()
    (outside / "secret.txt").write_text("secret")
    (cwd / "ok.txt").write_text("ok")
    return cwd, outside


def test_relative_and_absolute_inside(layout: tuple[Path, Path]) -> None:
    cwd, _ = layout
    ctx = ToolContext(cwd=cwd)
    assert resolve_path("ok.txt", ctx) == (cwd / "ok.txt").resolve()
    assert resolve_path(str(cwd / "sub" / "new.txt"), ctx) == (cwd / "sub" / "new.txt").resolve()
    assert resolve_path("sub/../ok.txt", ctx) == (cwd / "ok.txt").resolve()
    assert resolve_path(".", ctx) == cwd.resolve()
    assert display_path(resolve_path("sub/x.txt", ctx), ctx) == "sub/x.txt"
    assert display_path(resolve_path(".", ctx), ctx) == "."


@pytest.mark.parametrize("raw", ["../outside/secret.txt", "sub/../../outside/secret.txt", "/etc/passwd", "~/x"])
def test_escapes_are_refused(layout: tuple[Path, Path], raw: str) -> None:
    cwd, _ = layout
    with pytest.raises(PathRefusedError, match="outside the working directory"):
        resolve_path(raw, ToolContext(cwd=cwd))


def test_symlink_escape_is_refused(layout: tuple[Path, Path]) -> None:
    cwd, outside = layout
    (cwd / "link").symlink_to(outside)
    (cwd / "filelink.txt").symlink_to(outside / "secret.txt")
    ctx = ToolContext(cwd=cwd)
    with pytest.raises(PathRefusedError):
        resolve_path("link/secret.txt", ctx)
    with pytest.raises(PathRefusedError):
        resolve_path("filelink.txt", ctx)


def test_symlink_inside_is_fine(layout: tuple[Path, Path]) -> None:
    cwd, _ = layout
    (cwd / "alias.txt").symlink_to(cwd / "ok.txt")
    assert resolve_path("alias.txt", ToolContext(cwd=cwd)) == (cwd / "ok.txt").resolve()


def test_allowed_paths(layout: tuple[Path, Path]) -> None:
    cwd, outside = layout
    ctx = ToolContext(cwd=cwd, allowed_paths=(outside,))
    assert resolve_path("../outside/secret.txt", ctx) == (outside / "secret.txt").resolve()
    assert display_path(resolve_path("../outside/secret.txt", ctx), ctx) == str((outside / "secret.txt").resolve())
    only_file = ToolContext(cwd=cwd, allowed_paths=(outside / "secret.txt",))
    assert resolve_path(str(outside / "secret.txt"), only_file)
    with pytest.raises(PathRefusedError):
        resolve_path(str(outside / "other.txt"), only_file)


def test_nul_and_loops_are_refused(layout: tuple[Path, Path]) -> None:
    cwd, _ = layout
    ctx = ToolContext(cwd=cwd)
    with pytest.raises(PathRefusedError, match="NUL"):
        resolve_path("a\x00b", ctx)
    (cwd / "loop").symlink_to(cwd / "loop")
    with pytest.raises(PathRefusedError):
        resolve_path("loop/x", ctx)


async def test_tools_answer_refusals_as_errors(layout: tuple[Path, Path]) -> None:
    cwd, outside = layout
    ctx = ToolContext(cwd=cwd)
    cases: list[tuple[Tool, ToolInput]] = [
        (ReadFile(), {"path": "../outside/secret.txt"}),
        (WriteFile(), {"path": "../outside/new.txt", "content": "x"}),
        (ListFiles(), {"path": "../outside"}),
    ]
    for tool, inp in cases:
        out = await tool.run(inp, ctx)
        assert out.is_error and "outside the working directory" in out.content, tool.name
    assert not (outside / "new.txt").exists()
    ok = await ReadFile().run({"path": "../outside/secret.txt"}, ToolContext(cwd=cwd, allowed_paths=(outside,)))
    assert not ok.is_error and "secret" in ok.content
