"""This user's signing key: what tells a file nbagent wrote for you from one you received.

A task folder or a replay record may come from anyone (a shared drive, a repository, a model with
file tools). What in it would act by itself if believed — a saved transcript shown as trusted HTML,
an "Allow always" answer — is signed with HMAC-SHA256 under a key only this user can read (the
scheme of Jupyter's own notebook trust, ``nbformat.sign``), and ignored when the signature does not
match. The key lives in the user's Jupyter data dir (``$NBAGENT_REPLAY_KEY_FILE`` overrides it).

The key is refused — nothing verifies, nothing is signed — when it is not a regular file of this
user readable by no one else: a symlink to a world-readable file would let anyone who can read it
sign for you.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import stat
from pathlib import Path

from .json_depth import MAX_FILE_DEPTH, depth_exceeds

KEY_BYTES = 32
KEY_FILE_ENV = "NBAGENT_REPLAY_KEY_FILE"
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


class UnsafeKeyError(OSError):
    """The signing key file is not one only this user can read: it signs and verifies nothing."""


def key_file() -> Path:
    """Where the key is: ``$NBAGENT_REPLAY_KEY_FILE``, else ``<jupyter data dir>/nbagent/replay_key``."""
    from jupyter_core.paths import jupyter_data_dir

    return Path(os.environ.get(KEY_FILE_ENV) or Path(jupyter_data_dir()) / "nbagent" / "replay_key")


def _read(path: Path) -> bytes:
    """The key's bytes, if ``path`` is a regular file owned by this user with no group/other access."""
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        if os.path.islink(path):
            raise UnsafeKeyError(f"nbagent's signing key {path} is a symbolic link: delete it "
                                 "(a new key is made; saved transcripts and grants are then not trusted)") from None
        raise
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode) or (hasattr(os, "getuid") and st.st_uid != os.getuid()) \
                or st.st_mode & 0o077:
            raise UnsafeKeyError(f"nbagent's signing key {path} is not a file only you can read: delete it "
                                 "(a new key is made; saved transcripts and grants are then not trusted)")
        return f.read(4096)


def user_key() -> bytes:
    """This user's key, made on first use (0600, appearing whole: two kernels racing to make it
    end up with the same one). :class:`UnsafeKeyError` when the file is not safe to trust."""
    path = key_file()
    try:
        key = _read(path)
        if len(key) >= KEY_BYTES:
            return key
    except FileNotFoundError:
        _make(path)
    key = _read(path)
    if len(key) < KEY_BYTES:
        raise OSError(f"nbagent's signing key {path} is damaged: delete it (saved transcripts will be rebuilt)")
    return key


def _make(path: Path) -> None:
    """Write a new key beside ``path`` and link it there unless another kernel's key got there first.

    Linked, not created in place: a kernel reading the key file while another had created it but
    not yet written it read it empty, took the key for damaged and signed nothing (two test
    workers, or two kernels started together, on a machine with no key yet)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    made = path.with_name(f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}")
    try:
        _write_new(made)
    except BaseException:  # a full disk: no stray file left behind either
        made.unlink(missing_ok=True)
        raise
    try:
        os.link(made, path)
    except FileExistsError:
        pass  # another kernel's key is there: it is the key
    except OSError:  # a file system without hard links: made in place (the old, racy way)
        with contextlib.suppress(FileExistsError):
            _write_new(path)
    finally:
        made.unlink()


def _write_new(path: Path) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(os.urandom(KEY_BYTES))
        f.flush()
        os.fsync(f.fileno())


def sign(*parts: object) -> str | None:
    """The signature of ``parts`` (JSON values) under this user's key; None when the key is unusable.
    A number is signed as JSON in a browser writes it back: ``5.0`` as ``5`` (a notebook saved by
    JupyterLab holds ``5``, and a record of ``--max-session-budget 5`` no longer verified)."""
    return _signed(parts, canonical=True)


def _signed(parts: tuple[object, ...], *, canonical: bool) -> str | None:
    try:
        key = user_key()
    except OSError:
        return None
    values = [_whole_numbers(p) for p in parts] if canonical else list(parts)
    payload = json.dumps(values, sort_keys=True, ensure_ascii=False).encode()
    return hmac.new(key, payload, hashlib.sha256).hexdigest()


def _whole_numbers(value: object) -> object:
    """``value`` with every float that is a whole number as an int (JavaScript has one number type)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: _whole_numbers(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_whole_numbers(v) for v in value]
    return value


def signed_by_user(signature: object, *parts: object) -> bool:
    """Whether ``signature`` is this user's signature of ``parts`` (False for any doubt).

    ``parts`` may come from a file or a notebook someone else wrote: a value nested deeper than
    :data:`~nbagent.engine.disk.json_depth.MAX_FILE_DEPTH` (a received cell's metadata can nest as
    deep as the execute request's parser follows) or one JSON cannot encode is not signed by anyone, not a failed cell."""
    if not isinstance(signature, str) or depth_exceeds(parts, MAX_FILE_DEPTH):  # found before any walk recurses
        return False
    for canonical in (True, False):  # False: a signature made before numbers were signed as a browser writes them
        try:
            expected = _signed(parts, canonical=canonical)
        except (ValueError, TypeError):  # a circular value, or one JSON cannot encode
            return False
        if expected is not None and hmac.compare_digest(signature, expected):
            return True
    return False


__all__ = ["KEY_BYTES", "KEY_FILE_ENV", "UnsafeKeyError", "key_file", "sign", "signed_by_user", "user_key"]
