"""read_file, write_file, edit_file on real files, with the session's FileStateCache."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from nbagent.engine.context.file_state import FileStateCache
from nbagent.engine.contracts.tool_api import ToolContext, limit_output
from nbagent.tools import EditFile, ReadFile, WriteFile


def make_ctx(tmp_path: Path, turn: int = 1, **kw: object) -> ToolContext:
    return ToolContext(cwd=tmp_path, turn=turn, file_state=FileStateCache(), **kw)  # type: ignore[arg-type]


# -- read_file ------------------------------------------------------------------------------


async def test_read_whole_file_with_header(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\ntwo\nthree\n")
    out = await ReadFile().run({"path": "a.txt"}, make_ctx(tmp_path))
    assert not out.is_error
    assert out.content == "File a.txt (3 lines):\none\ntwo\nthree\n"


async def test_read_range(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("".join(f"l{i}\n" for i in range(1, 11)))
    ctx = make_ctx(tmp_path)
    out = await ReadFile().run({"path": "a.txt", "offset": 3, "limit": 2}, ctx)
    assert out.content == "File a.txt, lines 3-4 of 10:\nl3\nl4\n"
    out = await ReadFile().run({"path": "a.txt", "offset": 9, "limit": 50}, ctx)
    assert out.content == "File a.txt, lines 9-10 of 10:\nl9\nl10\n"
    out = await ReadFile().run({"path": "a.txt", "offset": 11}, ctx)
    assert out.is_error and "past the end" in out.content and "10 lines" in out.content


async def test_unchanged_reread_points_at_the_earlier_turn(tmp_path: Path) -> None:
    f = tmp_path / "a.txt"
    f.write_text("data\n")
    cache = FileStateCache()
    first = await ReadFile().run({"path": "a.txt"}, ToolContext(cwd=tmp_path, turn=1, file_state=cache))
    assert "data" in first.content
    again = await ReadFile().run({"path": "a.txt"}, ToolContext(cwd=tmp_path, turn=2, file_state=cache))
    assert again.content == "a.txt is unchanged since the read at turn 1; its content is in that earlier read_file result."
    part = await ReadFile().run({"path": "a.txt", "offset": 1, "limit": 1}, ToolContext(cwd=tmp_path, turn=2, file_state=cache))
    assert "unchanged since the read at turn 1" in part.content
    f.write_text("new data\n")
    fresh = await ReadFile().run({"path": "a.txt"}, ToolContext(cwd=tmp_path, turn=3, file_state=cache))
    assert "new data" in fresh.content


async def test_read_without_cache_always_reads(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("x")
    ctx = ToolContext(cwd=tmp_path)
    assert "x" in (await ReadFile().run({"path": "a.txt"}, ctx)).content
    assert "x" in (await ReadFile().run({"path": "a.txt"}, ctx)).content


async def test_cut_short_read_is_sent_again(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text("y" * 500 + "\n")
    cache = FileStateCache()
    ctx = ToolContext(cwd=tmp_path, turn=1, file_state=cache, max_output_chars=200)
    first = limit_output(await ReadFile().run({"path": "big.txt"}, ctx), ctx.max_output_chars)  # as the loop does
    assert "characters omitted" in first.content and first.display is not None and len(first.display) > 500
    again = await ReadFile().run({"path": "big.txt"}, ctx)
    assert "unchanged" not in again.content


async def test_read_errors(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path)
    (tmp_path / "d").mkdir()
    (tmp_path / "bin").write_bytes(b"\x89PNG\x00\x00\x01")
    (tmp_path / "empty").write_bytes(b"")
    missing = await ReadFile().run({"path": "nope.txt"}, ctx)
    assert missing.is_error and "No such file" in missing.content
    assert "is a directory" in (await ReadFile().run({"path": "d"}, ctx)).content
    binary = await ReadFile().run({"path": "bin"}, ctx)
    assert binary.is_error and "binary" in binary.content
    empty = await ReadFile().run({"path": "empty"}, ctx)
    assert not empty.is_error and "empty" in empty.content


async def test_read_invalid_utf8_is_replaced(tmp_path: Path) -> None:
    (tmp_path / "latin.txt").write_bytes("caf\xe9\n".encode("latin-1"))
    out = await ReadFile().run({"path": "latin.txt"}, make_ctx(tmp_path))
    assert not out.is_error and "caf\ufffd" in out.content


# -- write_file -----------------------------------------------------------------------------


async def test_write_creates_parents_and_confirms(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path)
    out = await WriteFile().run({"path": "sub/dir/new.py", "content": "print(1)\nprint(2)\n"}, ctx)
    assert not out.is_error
    assert out.content == "Created sub/dir/new.py (2 lines, 18 bytes)."
    assert (tmp_path / "sub/dir/new.py").read_text() == "print(1)\nprint(2)\n"
    out = await WriteFile().run({"path": "sub/dir/new.py", "content": "é"}, ctx)
    assert isinstance(out.content, str) and out.content.startswith("Overwrote sub/dir/new.py (1 lines, 2 bytes)")
    assert (tmp_path / "sub/dir/new.py").read_text(encoding="utf-8") == "é"
    assert [p.name for p in (tmp_path / "sub/dir").iterdir()] == ["new.py"]  # no temp files left


async def test_write_keeps_permissions(tmp_path: Path) -> None:
    f = tmp_path / "run.sh"
    f.write_text("old")
    f.chmod(0o755)
    await WriteFile().run({"path": "run.sh", "content": "new"}, make_ctx(tmp_path))
    assert stat.S_IMODE(f.stat().st_mode) == 0o755
    await WriteFile().run({"path": "fresh.txt", "content": "x"}, make_ctx(tmp_path))
    mask = os.umask(0)
    os.umask(mask)
    assert stat.S_IMODE((tmp_path / "fresh.txt").stat().st_mode) == 0o666 & ~mask


async def test_write_is_atomic_via_replace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    f = tmp_path / "a.txt"
    f.write_text("original")
    calls: list[tuple[str, str]] = []
    real_replace = os.replace

    def failing_replace(src: str, dst: str) -> None:
        calls.append((str(src), str(dst)))
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", failing_replace)
    out = await WriteFile().run({"path": "a.txt", "content": "new"}, make_ctx(tmp_path))
    monkeypatch.setattr(os, "replace", real_replace)
    assert out.is_error and "No space left" in out.content
    assert f.read_text() == "original"  # the old file is intact
    assert calls and calls[0][1] == str(f.resolve())
    assert sorted(os.listdir(tmp_path)) == ["a.txt"]  # the temp file was removed


async def test_write_refused_after_user_edit(tmp_path: Path) -> None:
    f = tmp_path / "a.txt"
    f.write_text("v1")
    cache = FileStateCache()
    await ReadFile().run({"path": "a.txt"}, ToolContext(cwd=tmp_path, turn=2, file_state=cache))
    f.write_text("user's edit")
    out = await WriteFile().run({"path": "a.txt", "content": "v2"}, ToolContext(cwd=tmp_path, turn=3, file_state=cache))
    assert out.is_error
    assert out.content == ("a.txt was modified on disk since it was read at turn 2 (probably by the user); "
                           "read it again before writing.")
    assert f.read_text() == "user's edit"
    await ReadFile().run({"path": "a.txt"}, ToolContext(cwd=tmp_path, turn=3, file_state=cache))
    ok = await WriteFile().run({"path": "a.txt", "content": "v2"}, ToolContext(cwd=tmp_path, turn=3, file_state=cache))
    assert not ok.is_error and f.read_text() == "v2"
    # Our own write is remembered: writing again needs no re-read.
    again = await WriteFile().run({"path": "a.txt", "content": "v3"}, ToolContext(cwd=tmp_path, turn=4, file_state=cache))
    assert not again.is_error


async def test_write_errors(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    ctx = make_ctx(tmp_path)
    assert "is a directory" in (await WriteFile().run({"path": "d", "content": "x"}, ctx)).content
    bad = await WriteFile().run({"path": "s.txt", "content": "\ud800"}, ctx)
    assert bad.is_error and "not valid Unicode" in bad.content


async def test_write_through_symlink_keeps_the_link(tmp_path: Path) -> None:
    (tmp_path / "real.txt").write_text("a")
    (tmp_path / "link.txt").symlink_to(tmp_path / "real.txt")
    await WriteFile().run({"path": "link.txt", "content": "b"}, make_ctx(tmp_path))
    assert (tmp_path / "link.txt").is_symlink() and (tmp_path / "real.txt").read_text() == "b"


# -- edit_file ------------------------------------------------------------------------------


async def test_edit_replaces_once(tmp_path: Path) -> None:
    f = tmp_path / "m.py"
    f.write_text("a = 1\nb = 2\nc = 3\n")
    out = await EditFile().run({"path": "m.py", "old": "b = 2", "new": "b = 20"}, make_ctx(tmp_path))
    assert not out.is_error and out.content == "Edited m.py: replaced 1 occurrence at line 2."
    assert f.read_text() == "a = 1\nb = 20\nc = 3\n"


async def test_edit_not_found_and_ambiguous(tmp_path: Path) -> None:
    f = tmp_path / "m.py"
    f.write_text("x = 0\nx = 0\n")
    ctx = make_ctx(tmp_path)
    nf = await EditFile().run({"path": "m.py", "old": "y = 0", "new": "y = 1"}, ctx)
    assert nf.is_error and isinstance(nf.content, str) and nf.content.startswith("old text not found in m.py")
    amb = await EditFile().run({"path": "m.py", "old": "x = 0", "new": "x = 1"}, ctx)
    assert amb.is_error and "occurs 2 times in m.py" in amb.content and "replace_all" in amb.content
    assert f.read_text() == "x = 0\nx = 0\n"
    ok = await EditFile().run({"path": "m.py", "old": "x = 0", "new": "x = 1", "replace_all": True}, ctx)
    assert ok.content == "Edited m.py: replaced 2 occurrences." and f.read_text() == "x = 1\nx = 1\n"


async def test_edit_other_errors(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path)
    (tmp_path / "crlf.txt").write_bytes(b"a\r\nb\r\n")
    missing = await EditFile().run({"path": "none.py", "old": "a", "new": "b"}, ctx)
    assert missing.is_error and "does not exist" in missing.content and "write_file" in missing.content
    same = await EditFile().run({"path": "crlf.txt", "old": "a", "new": "a"}, ctx)
    assert same.is_error and "identical" in same.content
    crlf = await EditFile().run({"path": "crlf.txt", "old": "a\nb", "new": "x"}, ctx)
    assert crlf.is_error and "CRLF" in crlf.content


async def test_edit_keeps_undecodable_bytes(tmp_path: Path) -> None:
    f = tmp_path / "mixed.txt"
    f.write_bytes(b"caf\xe9 = 1\nkey = old\n")
    out = await EditFile().run({"path": "mixed.txt", "old": "old", "new": "new"}, make_ctx(tmp_path))
    assert not out.is_error
    assert f.read_bytes() == b"caf\xe9 = 1\nkey = new\n"


async def test_edit_refused_after_user_edit(tmp_path: Path) -> None:
    f = tmp_path / "m.py"
    f.write_text("a = 1\n")
    cache = FileStateCache()
    await ReadFile().run({"path": "m.py"}, ToolContext(cwd=tmp_path, turn=1, file_state=cache))
    f.write_text("a = 1\n# user\n")
    out = await EditFile().run({"path": "m.py", "old": "a = 1", "new": "a = 2"},
                               ToolContext(cwd=tmp_path, turn=2, file_state=cache))
    assert out.is_error and "modified on disk since it was read at turn 1" in out.content
    assert f.read_text() == "a = 1\n# user\n"
    # After an edit the next edit needs no re-read, and a read sends content again.
    await ReadFile().run({"path": "m.py"}, ToolContext(cwd=tmp_path, turn=2, file_state=cache))
    ctx = ToolContext(cwd=tmp_path, turn=2, file_state=cache)
    assert not (await EditFile().run({"path": "m.py", "old": "a = 1", "new": "a = 2"}, ctx)).is_error
    assert not (await EditFile().run({"path": "m.py", "old": "a = 2", "new": "a = 3"}, ctx)).is_error
    reread = await ReadFile().run({"path": "m.py"}, ctx)
    assert "a = 3" in reread.content
