"""FileStateCache on real files: unchanged re-reads, refused stale writes, spans, invalidation."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from nbagent.engine.context.file_state import WHOLE_FILE, FileChangedError, FileSnapshot, FileStateCache


def write(p: Path, text: str) -> bytes:
    data = text.encode()
    p.write_bytes(data)
    return data


def test_unchanged_reread_answers_with_the_turn(tmp_path: Path) -> None:
    f = tmp_path / "a.txt"
    data = write(f, "hello\n")
    cache = FileStateCache()
    assert cache.check_read(f, 1) is None  # never read
    snap = cache.record(f, 1, data=data)
    assert isinstance(snap, FileSnapshot) and snap.size == 6 and snap.turn == 1 and snap.lines == WHOLE_FILE
    msg = cache.check_read(f, 2)
    assert msg is not None and "unchanged since the read at turn 1" in msg and str(f) in msg
    assert cache.check_read(f, 2, label="a.txt").startswith("a.txt is unchanged")  # type: ignore[union-attr]


def test_modified_file_is_read_again(tmp_path: Path) -> None:
    f = tmp_path / "a.txt"
    cache = FileStateCache()
    cache.record(f, 1, data=write(f, "hello\n"))
    write(f, "hellO\n")  # same size: the hash decides
    assert cache.check_read(f, 2) is None


def test_touch_without_change_counts_as_unchanged(tmp_path: Path) -> None:
    f = tmp_path / "a.txt"
    cache = FileStateCache()
    cache.record(f, 1, data=write(f, "x"))
    st = f.stat()
    os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns + 10_000_000_000))
    assert cache.check_read(f, 2) is not None
    cache.check_write(f)


def test_write_refused_after_external_modification(tmp_path: Path) -> None:
    f = tmp_path / "a.txt"
    cache = FileStateCache()
    cache.record(f, 3, data=write(f, "v1"))
    cache.check_write(f)  # unchanged: fine
    write(f, "v2 by the user")
    with pytest.raises(FileChangedError) as err:
        cache.check_write(f, label="a.txt")
    assert str(err.value) .startswith("a.txt was modified on disk since it was read at turn 3")
    assert "read it again before writing" in str(err.value)
    assert err.value.turn == 3 and err.value.path == os.path.realpath(f)


def test_write_refused_after_external_delete(tmp_path: Path) -> None:
    f = tmp_path / "a.txt"
    cache = FileStateCache()
    cache.record(f, 1, data=write(f, "v1"))
    f.unlink()
    with pytest.raises(FileChangedError, match="deleted on disk"):
        cache.check_write(f)


def test_own_write_then_external_change(tmp_path: Path) -> None:
    f = tmp_path / "a.txt"
    cache = FileStateCache()
    cache.record(f, 2, data=write(f, "mine"), source="write")
    cache.check_write(f)
    assert cache.check_read(f, 3) is None  # a write gives nothing to point a read at
    write(f, "theirs")
    with pytest.raises(FileChangedError, match="since it was written at turn 2"):
        cache.check_write(f)


def test_unknown_file_may_be_written(tmp_path: Path) -> None:
    f = tmp_path / "new.txt"
    FileStateCache().check_write(f)
    write(f, "exists")
    FileStateCache().check_write(f)
    with pytest.raises(FileChangedError, match="has not been read yet"):
        FileStateCache(require_read_before_write=True).check_write(f)
    FileStateCache(require_read_before_write=True).check_write(tmp_path / "missing.txt")


def test_record_hashes_from_disk_without_data(tmp_path: Path) -> None:
    f = tmp_path / "a.txt"
    write(f, "abc")
    cache = FileStateCache()
    snap = cache.record(f, 1)
    assert snap.sha256 == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"


def test_record_with_data_describes_what_the_model_saw(tmp_path: Path) -> None:
    f = tmp_path / "a.txt"
    write(f, "changed after the read")
    cache = FileStateCache()
    cache.record(f, 1, data=b"what was read")
    assert cache.check_read(f, 2) is None
    with pytest.raises(FileChangedError):
        cache.check_write(f)


def test_line_spans(tmp_path: Path) -> None:
    f = tmp_path / "a.txt"
    data = write(f, "".join(f"{i}\n" for i in range(1, 101)))
    cache = FileStateCache()
    cache.record(f, 1, data=data, lines=(10, 20))
    assert cache.check_read(f, 2, lines=(12, 15)) is not None
    assert "(lines 12-15)" in cache.check_read(f, 2, lines=(12, 15))  # type: ignore[operator]
    assert cache.check_read(f, 2, lines=(5, 15)) is None
    assert cache.check_read(f, 2, lines=(10, None)) is None
    assert cache.check_read(f, 2) is None
    cache.record(f, 2, data=data)  # a full read
    assert cache.check_read(f, 3, lines=(10, 20)) is not None
    cache.record(f, 3, data=data, lines=(1, 5))  # a narrower re-read keeps the wider span
    assert cache.get(f).lines == WHOLE_FILE  # type: ignore[union-attr]
    assert "turn 3" in cache.check_read(f, 4)  # type: ignore[operator]


def test_cut_short_read_is_not_deduplicated(tmp_path: Path) -> None:
    f = tmp_path / "a.txt"
    cache = FileStateCache()
    cache.record(f, 1, data=write(f, "x"), lines=None)
    assert cache.check_read(f, 2) is None
    cache.check_write(f)


def test_invalidate_reads_keeps_write_protection(tmp_path: Path) -> None:
    f = tmp_path / "a.txt"
    cache = FileStateCache()
    cache.record(f, 1, data=write(f, "v1"))
    cache.invalidate_reads()
    assert cache.check_read(f, 2) is None
    write(f, "v2")
    with pytest.raises(FileChangedError):
        cache.check_write(f)


def test_snapshot_from_a_later_turn_is_not_trusted(tmp_path: Path) -> None:
    f = tmp_path / "a.txt"
    cache = FileStateCache()
    cache.record(f, 5, data=write(f, "x"))
    assert cache.check_read(f, 3) is None  # rolled back to turn 3


def test_paths_are_keyed_by_real_path(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    f = tmp_path / "d" / "a.txt"
    cache = FileStateCache()
    cache.record(f, 1, data=write(f, "x"))
    link = tmp_path / "link.txt"
    link.symlink_to(f)
    assert cache.check_read(tmp_path / "d" / ".." / "d" / "a.txt", 2) is not None
    assert cache.check_read(link, 2) is not None
    assert link in cache and len(cache) == 1


def test_forget_and_clear(tmp_path: Path) -> None:
    f = tmp_path / "a.txt"
    cache = FileStateCache()
    cache.record(f, 1, data=write(f, "x"))
    cache.forget(f)
    assert cache.get(f) is None and f not in cache
    cache.record(f, 1, data=b"x")
    cache.clear()
    assert len(cache) == 0
