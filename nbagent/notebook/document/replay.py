"""Replay: Restart & Run All (and nbclient, papermill) show a recorded turn instead of asking again.

The record is the session's task folder (``.nbagent/sessions/<name>/``, written as the turn runs)
plus a small index beside it (``.nbagent/replay/<name>.json``: the notebook's path and each turn's
prompt). Why not cell ids in cell metadata: nbclient cannot send a cell id with an execution, so a
headless run would have no key; why not a record embedded in the notebook: the kernel cannot read
the notebook under nbclient either. What every client sends is the cell's text, so a fresh kernel
matches prompts in order: the first ``%%agent`` cell picks the latest record whose first prompt is
its prompt (the same notebook's first, when the front-end says which notebook it is; headless, the
notebook of the folder that has this very cell, or none when that is ambiguous), and each
next cell replays the next turn while its prompt is the recorded one. An edited prompt (or
``--live``) runs live from there, in a copy of the record rolled back to that point: the record of
the notebook as it was stays intact.

A replayed turn sends no request and needs no key: its events (text, tool cards, tables, notices)
are read from the task folder and shown by the same view as a live run. The code the agent ran is
in the materialised cells below, which re-execute normally, so the kernel ends in the state the
agent left.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import stat
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from ...engine.contracts.errors import NbAgentError
from ...engine.disk.persist import atomic_write_json, read_json
from .headless import plain_notebook_name
from .index_bounds import refuse_unparseable

if TYPE_CHECKING:
    from ...engine.contracts.json_types import JSONObject

RECORD_DIR = ".nbagent"
SESSIONS = "sessions"
INDEX = "replay"
# A session is a folder beside the index, named by nbagent (time, pid, count): never a path. A name
# with a separator or ``..`` in a received index would load another project's session.
_SESSION_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")
_SHA256 = re.compile(r"[0-9a-f]{64}")
# Plain dataclasses, checked by hand: a replayed Run All should not pay for importing pydantic and
# the engine's models (they load when a turn goes live).


def prompt_sha256(prompt: str) -> str:
    """The SHA-256 of a prompt, as records keep it where the prompt itself must not be saved."""
    return hashlib.sha256(prompt.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True)
class RecordedTurn:
    """One turn of a record as the notebook asked it."""

    turn: int
    prompt: str
    """The prompt as asked; redacted where it held a secret (then ``prompt_sha256`` matches it)."""
    cell_id: str | None = None
    """The agent cell's id, where the front-end sent one (JupyterLab, Notebook 7)."""
    prompt_sha256: str | None = None
    """The asked prompt's digest, kept only where ``prompt`` is its redacted form: a key typed into
    an agent cell is not saved again in ``.nbagent/``, and the cell still finds its turn."""

    def asks(self, prompt: str) -> bool:
        """Whether ``prompt`` is this turn's prompt."""
        return self.prompt == prompt if self.prompt_sha256 is None else self.prompt_sha256 == prompt_sha256(prompt)

    def digest(self) -> str:
        """The asked prompt's SHA-256 (what its saved transcript's signature covers)."""
        return self.prompt_sha256 or prompt_sha256(self.prompt)

    def asked_by(self, prompt: str, cell_id: str | None, *, strict: bool = False) -> bool:
        """Whether a cell with ``prompt`` (and ``cell_id``, if the front-end sent one) is this turn's:
        the same prompt, and the same cell wherever both ids are known (``strict``: both must be)."""
        if strict and (cell_id is None or self.cell_id is None):
            return False
        return self.asks(prompt) and (cell_id is None or self.cell_id is None or self.cell_id == cell_id)

    def to_json(self) -> JSONObject:
        return {"turn": self.turn, "prompt": self.prompt, **({"cell_id": self.cell_id} if self.cell_id else {}),
                **({"prompt_sha256": self.prompt_sha256} if self.prompt_sha256 else {})}

    @classmethod
    def from_json(cls, data: object) -> "RecordedTurn":
        """Raises ``ValueError`` for anything but what :meth:`to_json` writes."""
        if not isinstance(data, dict) or set(data) - {"cell_id", "prompt_sha256"} != {"turn", "prompt"} \
                or type(data["turn"]) is not int or data["turn"] < 1 or not isinstance(data["prompt"], str) \
                or not isinstance(data.get("cell_id", ""), str):
            raise ValueError("not a replay turn")
        digest = data.get("prompt_sha256")
        if digest is not None and not (isinstance(digest, str) and _SHA256.fullmatch(digest)):
            raise ValueError("not a replay turn")
        return cls(data["turn"], data["prompt"], data.get("cell_id"), data.get("prompt_sha256"))


@dataclass(frozen=True)
class ReplayIndex:
    """``.nbagent/replay/<session>.json``: which notebook recorded the session, and its prompts."""

    session: str
    notebook: str | None = None
    provider: str | None = None
    """Which provider answered (the replayed header names it, not the kernel's provider now)."""
    turns: tuple[RecordedTurn, ...] = field(default=())
    version: int = 1
    linked: str | None = None  # this user's signature of an index with no turn yet (earlier.link_signature)

    def with_turn(self, turn: int, prompt: str, cell_id: str | None = None, *, said: str | None = None) -> "ReplayIndex":
        """The index with ``turn`` asked by ``prompt`` (``said``: the prompt redacted, kept instead
        of it where it differs), and without the turns it replaced."""
        kept = tuple(t for t in self.turns if t.turn < turn)
        hidden = said is not None and said != prompt
        asked = RecordedTurn(turn, said, cell_id, prompt_sha256(prompt)) if hidden and said is not None \
            else RecordedTurn(turn, prompt, cell_id)
        return replace(self, turns=(*kept, asked), linked=None)

    def up_to(self, turn: int) -> "ReplayIndex":
        return replace(self, turns=tuple(t for t in self.turns if t.turn <= turn))

    def to_json(self) -> JSONObject:
        return {"version": self.version, "session": self.session, "notebook": self.notebook,
                "provider": self.provider, "turns": [t.to_json() for t in self.turns],
                **({"linked": self.linked} if self.linked is not None else {})}

    @classmethod
    def from_json(cls, data: object) -> "ReplayIndex":
        """Raises ``ValueError`` for anything but what :meth:`to_json` writes."""
        if not isinstance(data, dict) or set(data) - {"linked"} != {"version", "session", "notebook", "provider", "turns"}:
            raise ValueError("not a replay index")
        texts = (data["notebook"], data["provider"], data.get("linked"))
        if data["version"] != 1 or not is_session_name(data["session"]) or not all(
                t is None or isinstance(t, str) for t in texts) or not isinstance(data["turns"], list):
            raise ValueError("not a replay index")
        turns = tuple(RecordedTurn.from_json(t) for t in data["turns"])
        return cls(data["session"], data["notebook"], data["provider"], turns, linked=data.get("linked"))


def is_session_name(name: object) -> bool:
    """Whether ``name`` can name a session folder: a plain name, no path (no ``/``, ``\\``, ``..``)."""
    return isinstance(name, str) and _SESSION_NAME.fullmatch(name) is not None and ".." not in name


class RecordFolderError(NbAgentError):
    """``.nbagent/`` (or a folder of it nbagent writes) is a symlink or not a folder: nothing is written."""


def record_dir_problem(root: Path, session: str | None = None) -> str | None:
    """Why nbagent will not record (nor continue a record) under ``root`` (None: it may).

    Writing goes into ``.nbagent/``, ``.nbagent/replay/`` and ``.nbagent/sessions/`` (and a session's
    folders in both). A folder received with the notebook may make any of them a symlink, and every
    write would then land where it points, outside the project (a replay index, whose ``notebook``
    and prompts are text from the received folder, in a folder a shell sources whole such as
    ``~/.bashrc.d``). Each one that exists must be a real folder."""
    names = [RECORD_DIR, f"{RECORD_DIR}/{INDEX}", f"{RECORD_DIR}/{SESSIONS}"]
    if session is not None:
        names += [f"{RECORD_DIR}/{INDEX}/{session}", f"{RECORD_DIR}/{SESSIONS}/{session}"]
    for name in names:
        try:
            mode = os.lstat(root / name).st_mode
        except FileNotFoundError:
            continue
        except OSError as exc:
            return f"{name} cannot be checked ({exc.strerror})"
        if stat.S_ISLNK(mode):
            return f"{name} is a symbolic link"
        if not stat.S_ISDIR(mode):
            return f"{name} is not a folder"
    return None


def refuse_unsafe(root: Path, session: str | None = None) -> None:
    """:class:`RecordFolderError` where :func:`record_dir_problem` names a problem."""
    problem = record_dir_problem(root, session)
    if problem is not None:
        raise RecordFolderError(f"nbagent writes no record here: {problem} (a folder that came with the notebook "
                                "may point it elsewhere)")


def sessions_dir(root: Path) -> Path:
    """Where notebook sessions are recorded (under the kernel's working directory)."""
    return root / RECORD_DIR / SESSIONS


def drop_if_unused(root: Path, task_dir: str | Path | None) -> None:
    """Remove a closed session's folder in this notebook's record when it holds nothing: a session
    made and replaced before it asked anything (the code's ``s = magics.new_session()``, filled by
    a replay) left an empty folder, one more in ``.nbagent/sessions/`` at each headless Run All."""
    if task_dir is None or Path(task_dir).resolve().parent != sessions_dir(root).resolve():
        return
    with contextlib.suppress(OSError):
        os.rmdir(task_dir)  # only ever removes an empty folder


def new_session_dir(root: Path, count: int) -> Path:
    """A new session's folder: the time, then the process and a count (kernels share the folder)."""
    name = unused_session_name(sessions_dir(root), count)
    refuse_unsafe(root, name)  # a link planted under the name it would get is never followed either
    return sessions_dir(root) / name


def unused_session_name(parent: Path, count: int) -> str:
    """The time, the process and the first count from ``count`` that no entry of ``parent`` has: a
    ``%reload_ext nbagent`` starts the count again, and within the same second its new session got
    the old one's folder (failing on the lock the old session held, or resuming a closed one's
    history as its own)."""
    stamp = time.strftime(f"%Y%m%d-%H%M%S-{os.getpid()}")
    while os.path.lexists(parent / f"{stamp}-{count}"):
        count += 1
    return f"{stamp}-{count}"


def _index_file(root: Path, session: str) -> Path:
    return root / RECORD_DIR / INDEX / f"{session}.json"


def save_index(root: Path, index: ReplayIndex) -> None:
    """Write the index atomically (one small file per session; its kernel is its one writer)."""
    refuse_unsafe(root, index.session)
    path = _index_file(root, index.session)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_json(path, index.to_json())


def load_index(root: Path, session: str) -> ReplayIndex | None:
    """The index of ``session`` (None: none, damaged, or not naming itself: an index is the
    session's own, so a received one cannot point at another folder)."""
    if not is_session_name(session):
        return None
    path = _index_file(root, session)
    refuse_unparseable(path)
    try:
        index = ReplayIndex.from_json(read_json(path))
    except (OSError, ValueError, TypeError):
        return None
    return index if index.session == session else None


@dataclass(frozen=True)
class Found:
    """What a first agent cell found to replay."""

    index: ReplayIndex | None = None
    ambiguous: tuple[str | None, ...] = ()
    """The notebooks whose records of this prompt a headless kernel cannot tell apart (``None``:
    a headless run that could not name its notebook); none of them is replayed."""
    gone: tuple[str, ...] = ()
    """Headless, nothing replayed: the notebooks whose records begin with this prompt but that are
    not in the folder any more (renamed, moved or deleted since), for the line that says why it asks
    (plain file names only, at most three)."""


def _candidates(root: Path, prompt: str, cell_id: str | None, strict: bool) -> list[tuple[float, ReplayIndex]]:
    """The records whose first turn this cell could have asked, with their index's time."""
    folder = root / RECORD_DIR / INDEX
    if not folder.is_dir():
        return []
    found: list[tuple[float, ReplayIndex]] = []
    for path in folder.glob("*.json"):
        index = load_index(root, path.stem)
        if index is None or not index.turns or not index.turns[0].asked_by(prompt, cell_id, strict=strict):
            continue
        if not (sessions_dir(root) / index.session).is_dir():
            continue
        found.append((path.stat().st_mtime, index))
    return found


def has_records(root: Path) -> bool:
    """Whether the folder holds any replay record (of any notebook): a headless first cell that
    finds none of its own must not then say there is no .nbagent/ record beside the notebook."""
    folder = root / RECORD_DIR / INDEX
    return folder.is_dir() and any(folder.glob("*.json"))


def without_session(root: Path, prompt: str) -> bool:
    """Whether a record of the folder begins with ``prompt`` but its session folder is gone
    (``.nbagent/sessions/`` deleted to save space): the line says so, not "a new or edited cell"."""
    folder = root / RECORD_DIR / INDEX
    indexes = (load_index(root, path.stem) for path in folder.glob("*.json")) if folder.is_dir() else ()
    return any(i is not None and i.turns and i.turns[0].asked_by(prompt, None, strict=False)
               and not (sessions_dir(root) / i.session).is_dir() for i in indexes)


def recorded_turn(root: Path, prompt: str, holds: Callable[[str], bool]) -> tuple[str, int] | None:
    """The latest recorded turn (session, turn) that asked ``prompt`` in a notebook of the folder
    that ``holds(name)`` (has this very cell), or in a headless run that named none (as
    :func:`choose_record` takes them), at any turn, not only the first: what a headless cell that
    goes live after a live turn above it would have replayed, named in its line."""
    folder = root / RECORD_DIR / INDEX
    if not folder.is_dir():
        return None
    found: list[tuple[float, str, int]] = []
    for path in folder.glob("*.json"):
        index = load_index(root, path.stem)
        if index is None or (index.notebook is not None and not holds(index.notebook)):
            continue
        turns = [t.turn for t in index.turns if t.asks(prompt)]
        if turns and (sessions_dir(root) / index.session).is_dir():
            found.append((path.stat().st_mtime, index.session, max(turns)))
    return max(found)[1:] if found else None


def choose_record(root: Path, prompt: str, notebook: str | None, cell_id: str | None = None, *,
                  strict: bool = False, holds: Callable[[str], bool] | None = None) -> Found:
    """The record a fresh kernel replays for a first agent cell with ``prompt``: the latest one
    whose first prompt it is, asked by this cell where the front-end sends cell ids (``strict``:
    only a record this very cell asked, both ids known and equal), and of this notebook:

    - where the kernel knows which notebook it runs (the front-end, ``JPY_SESSION_NAME``), only
      that notebook's records;
    - headless (nbclient, papermill: no name), a record naming a notebook is this one's only where
      ``holds(name)``: that notebook is in the folder and has this very cell. Records of several
      such notebooks, or a record that names none (a headless run that could not tell) newer than
      this notebook's own, are ambiguous: none is replayed, rather than another notebook's answer.
    """
    found = _candidates(root, prompt, cell_id, strict)
    if notebook is not None:
        found = [(t, i) for t, i in found if i.notebook == notebook]
        return Found(max(found, key=lambda item: item[0])[1] if found else None)
    mine = [(t, i) for t, i in found if i.notebook is not None and (holds is None or holds(i.notebook))]
    unnamed = [(t, i) for t, i in found if i.notebook is None]
    owners = sorted({i.notebook for _, i in mine if i.notebook is not None})
    pool = mine + unnamed
    if not pool:
        # A renamed notebook's record still names the old file: the line says so, rather than
        # that no record begins with this prompt.
        return Found(gone=tuple(sorted({i.notebook for _, i in found if i.notebook is not None and _gone(root, i.notebook)})[:3]))
    latest = max(pool, key=lambda item: item[0])[1]
    if len(owners) > 1 or (owners and latest.notebook is None):
        return Found(ambiguous=(*owners, *((None,) if unnamed else ())))
    return Found(latest)


def _gone(root: Path, name: str) -> bool:
    """Whether ``name`` is a plain notebook name (``headless.plain_notebook_name``) not in the folder any more."""
    return plain_notebook_name(name) and not (root / name).exists()


def find_record(root: Path, prompt: str, notebook: str | None, cell_id: str | None = None, *,
                strict: bool = False, holds: Callable[[str], bool] | None = None) -> ReplayIndex | None:
    """The record :func:`choose_record` picks (None when there is none, or when it is ambiguous)."""
    return choose_record(root, prompt, notebook, cell_id, strict=strict, holds=holds).index


@dataclass
class ReplayCursor:
    """Where a kernel's replay stands: the record and how many of its turns were shown."""

    index: ReplayIndex
    shown: int = 0

    def next_matches(self, prompt: str, cell_id: str | None = None) -> bool:
        nxt = self.shown + 1
        return any(t.turn == nxt and t.asked_by(prompt, cell_id) for t in self.index.turns)


__all__ = ["Found", "RecordFolderError", "RecordedTurn", "ReplayCursor", "ReplayIndex", "choose_record", "find_record",
           "has_records", "is_session_name", "load_index", "new_session_dir", "prompt_sha256", "record_dir_problem",
           "unused_session_name",
           "refuse_unsafe", "save_index", "sessions_dir", "without_session"]
