"""The user's signing key (transcripts, "Allow always" grants) signs and verifies only when it is a
regular file of this user that no one else can read (issue 33: a symlink to a world-readable file
would let anyone who reads it sign for you)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from nbagent.engine.disk.user_key import UnsafeKeyError, sign, signed_by_user, user_key


@pytest.fixture
def key_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "keys" / "replay_key"
    monkeypatch.setenv("NBAGENT_REPLAY_KEY_FILE", str(path))
    return path


def test_the_key_is_made_private_on_first_use_and_signatures_verify(key_path: Path) -> None:
    signature = sign("a", 1, {"b": "c"})
    assert signature is not None and signed_by_user(signature, "a", 1, {"b": "c"})
    assert not signed_by_user(signature, "a", 2, {"b": "c"}) and not signed_by_user(None, "a")
    assert key_path.stat().st_mode & 0o777 == 0o600


def test_a_signature_holds_after_a_browser_writes_a_whole_float_back_as_an_int(key_path: Path) -> None:
    # JupyterLab saves a record's 5.0 (a --max-session-budget 5, a free endpoint's cost 0.0) as 5:
    # the user's own record then read as someone else's.
    import hashlib
    import hmac
    import json

    signature = sign({"budget": 5.0, "cost": 0.0, "rate": 0.25})
    assert signature is not None and signed_by_user(signature, {"budget": 5, "cost": 0, "rate": 0.25})
    assert signed_by_user(signature, {"budget": 5.0, "cost": 0.0, "rate": 0.25})
    assert not signed_by_user(signature, {"budget": 6, "cost": 0, "rate": 0.25})
    made_before = hmac.new(key_path.read_bytes(), json.dumps([{"budget": 5.0}]).encode(), hashlib.sha256).hexdigest()
    assert signed_by_user(made_before, {"budget": 5.0})  # a signature made before still verifies


def test_a_symlink_to_a_world_readable_key_is_refused(key_path: Path, tmp_path: Path) -> None:
    shared = tmp_path / "shared_key"
    shared.write_bytes(os.urandom(32))
    shared.chmod(0o644)
    key_path.parent.mkdir(parents=True)
    key_path.symlink_to(shared)
    with pytest.raises(UnsafeKeyError, match="symbolic link"):
        user_key()
    assert sign("x") is None and not signed_by_user("0" * 64, "x")


def test_a_key_others_can_read_is_refused(key_path: Path) -> None:
    user_key()
    key_path.chmod(0o644)
    with pytest.raises(UnsafeKeyError, match="only you can read"):
        user_key()
    assert sign("x") is None


def test_a_kernel_reading_the_key_while_another_makes_it_gets_the_same_key(key_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    # Two kernels (two test workers) signing at once on a fresh machine: the second reads the key
    # file the first has just created. It read the file empty (created, not yet written), took the
    # key for damaged and signed nothing: that record was then someone else's.
    from nbagent.engine.disk.user_key import KEY_BYTES

    real_urandom = os.urandom
    other: list[bytes] = []

    def urandom_while_another_kernel_reads(n: int) -> bytes:
        if n == KEY_BYTES and not other:  # the first maker writes its key: the other kernel reads now
            other.append(b"(reading)")  # once: the other kernel's own key, if it makes one, is not hooked
            other[0] = user_key()
        return real_urandom(n)

    monkeypatch.setattr(os, "urandom", urandom_while_another_kernel_reads)
    mine = user_key()
    assert other == [mine] and len(mine) == KEY_BYTES


def test_a_key_that_could_not_be_written_leaves_no_stray_file(key_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from nbagent.engine.disk import user_key as user_key_mod

    def full_disk(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full_disk)
    for _ in range(3):
        with pytest.raises(OSError, match="No space left"):
            user_key_mod.user_key()
    assert os.listdir(key_path.parent) == []
