"""What a live turn showed, kept signed so that a replay can show it again as it was.

Rebuilding a turn's view from its events costs ~150 ms of widgets per cell; showing the saved
transcript costs a file read. But a saved transcript is HTML, and outputs of a running session are
trusted by JupyterLab: a transcript file written by someone else (a shared folder, a repository)
must never reach the page. So each one is signed with HMAC-SHA256 under a key only this user can
read — the scheme of Jupyter's own notebook trust (``nbformat.sign``). A transcript whose signature
does not match is ignored and the turn is rebuilt from its events, which go through the view's
sanitiser like a live run.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Protocol

from ...engine.contracts.json_types import JSONObject
from ...engine.disk.persist import atomic_write_json, read_json
from ...engine.disk.user_key import sign, signed_by_user
from .inputs import TurnInputs
from .replay import INDEX, RECORD_DIR, prompt_sha256, refuse_unsafe

MIMES = ("text/plain", "text/html")


def as_displayed(bundle: Mapping[str, str]) -> dict[str, str]:
    """A recorded transcript as a replay displays it: its text's control characters marked
    (:func:`~nbagent.display.format.terminal_text`), as a live run's are now. A record made before,
    or a received notebook's (whose plain text is shown), reached a terminal IPython's screen or an
    exported text with its escapes (``\\x1b]52;…`` sets a terminal's clipboard)."""
    from ...display.format import terminal_text

    plain = bundle.get("text/plain")
    return {**bundle, "text/plain": terminal_text(plain)} if isinstance(plain, str) else dict(bundle)


def _file(root: Path, session: str, turn: int) -> Path:
    return root / RECORD_DIR / INDEX / session / f"{turn}.json"


class Ended(Protocol):
    """How a turn ended, as a record keeps it (the loop's ``Done`` event, or a :class:`Shown`)."""

    @property
    def reason(self) -> object: ...

    @property
    def error(self) -> str | None: ...


def _signed_parts(session: str, turn: int, digest: str, bundle: Mapping[str, object], outcome: Mapping[str, object],
                  inputs: object, options: object = None) -> list[object]:
    # The prompt is signed too (``digest``: its SHA-256): the index that maps prompts to turns is a
    # plain file, and a transcript must not replay under another question. (A transcript saved
    # before the prompt was signed no longer verifies: it is rebuilt from its events, as plain text.)
    # So are the cell's own session options, where kept: its options line is not signed.
    asked: dict[str, object] = {"prompt_sha256": digest}
    if options is not None:
        asked["options"] = options
    return [session, turn, asked, bundle, outcome] + ([inputs] if inputs is not None else [])


@dataclass(frozen=True)
class Shown:
    """A turn as it was shown: its transcript, and how its run ended (the cell fails again if it did)."""

    bundle: dict[str, str]
    reason: str
    error: str | None = None
    inputs: TurnInputs | None = None
    """What the answer depended on (None: recorded before nbagent recorded it)."""
    options: JSONObject | None = None
    """The session options the cell's line gave when it ran (``--allow``, ``--model``, …: see
    :func:`~.replayed_options.options_of`), as signed (None: recorded before they were kept); a
    replay carries these to your next prompt, not the line as it reads now."""


def save_shown(root: Path, session: str, turn: int, prompt: str, bundle: Mapping[str, str], done: Ended | None,
               inputs: TurnInputs | None = None, options: JSONObject | None = None) -> None:
    """Keep what ``turn`` (asked with ``prompt``) showed (its text and HTML transcript), how it
    ended, what it depended on and the session options its cell's line gave, signed."""
    _save_shown(root, session, turn, prompt_sha256(prompt), bundle, done, inputs, options)


def _save_shown(root: Path, session: str, turn: int, digest: str, bundle: Mapping[str, str], done: Ended | None,
                inputs: TurnInputs | None, options: JSONObject | None) -> None:
    kept = {m: bundle[m] for m in MIMES if isinstance(bundle.get(m), str)}
    if len(kept) != len(MIMES) or done is None:
        return
    outcome = {"reason": str(done.reason), "error": done.error}
    deps = inputs.to_json() if inputs is not None else None
    signature = sign(*_signed_parts(session, turn, digest, kept, outcome, deps, options))
    if signature is None:  # no safe key: nothing is kept that a replay would trust
        return
    refuse_unsafe(root, session)
    path = _file(root, session, turn)
    path.parent.mkdir(parents=True, exist_ok=True)
    saved = {"signature": signature, "bundle": kept, "outcome": outcome}
    if deps is not None:
        saved["inputs"] = deps
    if options is not None:
        saved["options"] = options
    atomic_write_json(path, saved)


def load_shown(root: Path, session: str, turn: int, prompt: str) -> Shown | None:
    """The transcript ``turn`` showed, if it is there and this user's key signed it for ``prompt``."""
    return _load_shown(root, session, turn, prompt_sha256(prompt))


def _load_shown(root: Path, session: str, turn: int, digest: str) -> Shown | None:
    try:
        saved = read_json(_file(root, session, turn))
    except (OSError, ValueError):
        return None
    if not isinstance(saved, dict) or not isinstance(saved.get("bundle"), dict):
        return None
    bundle, outcome = saved["bundle"], saved.get("outcome")
    if set(bundle) != set(MIMES) or not all(isinstance(v, str) for v in bundle.values()):
        return None
    if not isinstance(outcome, dict) or not isinstance(outcome.get("reason"), str):
        return None
    deps, options = saved.get("inputs"), saved.get("options")
    if not signed_by_user(saved.get("signature"), *_signed_parts(session, turn, digest, bundle, outcome, deps, options)):
        return None
    if options is not None and not isinstance(options, dict):
        return None
    try:
        inputs = TurnInputs.from_json(deps) if deps is not None else None
    except ValueError:
        return None
    error = outcome.get("error")
    return Shown(bundle, outcome["reason"], error if isinstance(error, str) else None, inputs,
                 options)


def recorded_inputs(root: Path, session: str, turn: int) -> TurnInputs | None:
    """What ``turn`` depended on as its saved file says, signed or not: used only to say that
    something changed (a forged file can at most hide a change in an answer that is not this
    user's anyway: such a turn is rebuilt from its events as text)."""
    try:
        return TurnInputs.from_json(read_json(_file(root, session, turn)).get("inputs"))
    except (OSError, ValueError, AttributeError):
        return None


def copy_shown(root: Path, old: str, new: str, digests: Mapping[int, str]) -> None:
    """A fork keeps what the turns it shares with its record showed (``digests``: turn → its
    prompt's SHA-256, as the record's index has them), signed again under its name."""
    for turn, digest in digests.items():
        shown = _load_shown(root, old, turn, digest)
        if shown is not None:
            _save_shown(root, new, turn, digest, shown.bundle, shown, shown.inputs, shown.options)
