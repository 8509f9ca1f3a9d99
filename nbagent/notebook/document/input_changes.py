"""What changed since a turn was recorded: its inputs (:mod:`.inputs`) compared when its cell
replays, each named as a user would ("`sales`", "sales.csv", "the cell `df = load()`").

A record may be received, and the notebook now may hold secrets the record never saw, so the
comparison is made with the secrets at hand (``redact``): a value, file, cell or output holding
one has no digest now (it was never recorded with one: see :mod:`.inputs`), so it reads as
changed whatever the record says, and a received record's digest cannot check a guess of it; and
a changed cell is named by its first line redacted."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Mapping

from .described import value_fingerprint
from .fingerprint import earlier_fingerprint, file_fingerprint, fingerprint, library_paths, shown_fingerprint
from .inputs import CellLog, TurnInputs, cell_key, followed, ran_inputs, short_secret

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell

    from ...engine.loop.sanitize import Sanitizer
    from ..kernel_context.figures import DisplayedImages
    from ..magics_api import MagicsApi


def changes(inputs: TurnInputs, shell: InteractiveShell, root: Path, log: CellLog | None = None,
            displayed: DisplayedImages | None = None, redact: Callable[[str], str] | None = None) -> list[str]:
    """What changed since the turn was recorded, each named as a user would ("`sales`",
    "sales.csv"); empty when everything it depended on is as it was. ``redact``: the secrets at
    hand (what holds one is compared as changed, and named without it)."""
    ns = shell.user_ns
    secret = (lambda text: redact(text) != text) if redact is not None else None
    changed: list[str] = []
    for name, fp in inputs.read.items():
        if name not in ns:
            # unless the turn's own code made it again as it found it: its code cells below do so again
            if inputs.left_values.get(name) != fp:
                changed.append(f"`{name}` (no longer defined)")
        elif not _as_found_or_left(value_fingerprint(ns[name], secret=secret, replay=True), fp, inputs.left_values.get(name)) \
                and not _as_found_or_left(earlier_fingerprint(ns[name], secret), fp, inputs.left_values.get(name)):
            changed.append(f"`{name}`")
    for name, fp in inputs.shown.items():  # a secret's text is not compared: its length would answer a guess
        if name in ns and not short_secret(ns[name], redact) \
                and not _as_found_or_left(shown_fingerprint(ns[name]), fp, inputs.left_values.get(name)):
            changed.append(f"`{name}`")
    changed += _changed_files(inputs.files, root, secret)
    ran = _ran_cells(shell, secret) if inputs.cells or inputs.outputs or inputs.images else []
    if inputs.cells:
        changed += _changed_cells(inputs, ran, log, redact)
    if inputs.outputs:
        changed += _changed_outputs(inputs, shell, ran, secret)
    if inputs.images and displayed is not None:
        changed += _changed_images(inputs, ran, displayed)
    return changed


def _ran_cells(shell: InteractiveShell, secret: Callable[[str], bool] | None) -> list[str]:
    """The cells run here so far, a cell holding a secret as an empty one: its text has no digest to
    match a record's (one never recorded it), so a received record cannot check a guess of it."""
    return [s if secret is None or not secret(s) else "" for s in ran_inputs(shell)]


def _changed_images(inputs: TurnInputs, ran: list[str], displayed: DisplayedImages) -> list[str]:
    """A cell whose displayed image the model was sent, that has run here by then and displayed other
    images. One that has not run here, or whose images are no longer kept, is not reported."""
    latest = {cell_key(source): n for n, source in enumerate(ran) if source.strip()}
    changed = []
    for key, digest in inputs.images.items():
        n = latest.get(key)
        now = displayed.digest_of(n) if n is not None else None
        if now is not None and now != digest:
            line = inputs.cells.get(key)
            changed.append(f"the image of the cell `{line}`" if line else "the image of a cell above")
    return changed


def _changed_outputs(inputs: TurnInputs, shell: InteractiveShell, ran: list[str],
                     secret: Callable[[str], bool] | None) -> list[str]:
    """A cell whose ``Out[n]`` the model was told, that has run here by now with another value (or
    none). One that has not run here (deleted, or further down) is not reported."""
    out = shell.user_ns.get("Out", {})
    latest = {cell_key(source): n for n, source in enumerate(ran) if source.strip()}
    changed = []
    for key, fp in inputs.outputs.items():
        n = latest.get(key)
        if n is None:
            continue
        now = fingerprint(out[n], secret=secret) if isinstance(out, dict) and n in out else None
        if now != fp and (now is None or earlier_fingerprint(out[n], secret) != fp):
            line = inputs.cells.get(key)
            changed.append(f"the output of the cell `{line}`" if line else "the output of a cell above")
    return changed


def _as_found_or_left(now: str | None, found: str, left: str | None) -> bool:
    """As the turn found it, or as its own work left it (a cell it fixed, above the agent cell)."""
    return now is not None and now in (found, left)


def _changed_files(files: Mapping[str, str], root: Path, secret: Callable[[str], bool] | None = None) -> list[str]:
    """The recorded files whose bytes differ now. A record may be received: a name that would not
    have been recorded here (absolute, ``..``, hidden, through a symlink) is never opened."""
    root, libraries = root.resolve(), library_paths()
    changed = []
    for rel, fp in files.items():
        full = os.path.realpath(root / rel)
        if followed(full, root, libraries) != rel:
            changed.append(f"{rel} (not a file of this folder)")
            continue
        now = file_fingerprint(Path(full), secret)
        if now is None and os.path.isfile(full):
            changed.append(rel)  # it holds a secret: changed, whatever the record's digest says
        elif now is None:
            changed.append(f"{rel} (not a regular file)" if os.path.lexists(full) else f"{rel} (missing)")
        elif now != fp:
            changed.append(rel)
    return changed


def _changed_cells(inputs: TurnInputs, ran_cells: list[str], log: CellLog | None,
                   redact: Callable[[str], str] | None) -> list[str]:
    """A cell in context whose id ran with other text by now is changed; one whose id has not run
    here (deleted, or further down) is not reported — like a variable only shown. Without ids
    (a headless recording) a text that has not run here by now is changed."""
    ran = {cell_key(s) for s in ran_cells if s.strip()}
    changed = []
    for key, line in inputs.cells.items():
        cell_id = inputs.cell_ids.get(key)
        if cell_id is not None:
            now = log.latest.get(cell_id) if log is not None else None
            holds = now is not None and redact is not None and redact(now) != now
            if now is not None and (holds or not _as_found_or_left(cell_key(now), key, inputs.left_cells.get(cell_id))):
                # Named as it reads now, where the user can find it (the turn may have fixed its first
                # line since: the recorded one names a text no longer in the notebook); redacted before
                # it is cut, since the line goes into the cell's output and the saved notebook.
                text = redact(now) if holds and redact is not None else now
                first = text.strip().splitlines()[0][:60] if text.strip() else line
                changed.append(f"the cell `{first}`")
        elif key not in ran:
            changed.append(f"the cell `{line}`")
    return changed


def secrets_at_hand(magics: MagicsApi) -> Callable[[str], str]:
    """The redaction of the secrets at hand when a cell replays, made at its first use: the
    session's (between runs it reads the notebook's variables itself), else, with no session loaded
    (a replay loads none), the environment's and the namespace's credentials, as the model is sent
    them. A replay compares a record, maybe received, with a notebook that may hold secrets now."""
    made: list[Callable[[str], str]] = []

    def redact(text: str) -> str:
        if not made:
            made.append(_sanitizer(magics).redact)
        return made[0](text)
    return redact


def _sanitizer(magics: MagicsApi) -> Sanitizer:
    from ...engine.credentials.env_secrets import credential_env_values
    from ...engine.loop.sanitize import Sanitizer, secret_values
    from ..new_session import configured_secret_env

    sess = magics.current
    if sess is not None:
        return sess.agent.engine.sanitizer()
    kernel: tuple[str, ...] = ()
    if magics.shell is not None:
        from ..kernel_context import KernelContext

        try:
            # With what tables showed before they were masked in place, as the run's own redaction has.
            kernel = KernelContext(magics.shell, getattr(magics, "last_error", None),
                                   images=getattr(magics, "displayed", None)).secrets()
        except Exception:  # noqa: BLE001 - a namespace that cannot be read fails no replay (keys by shape still go)
            kernel = ()
    return Sanitizer(secret_values(configured_secret_env(magics), (*credential_env_values(), *kernel)))


def changed_line(changed: list[str]) -> str:
    """One line naming what changed: "`sales` changed since this answer was recorded"."""
    names = changed[:3] + ([f"{len(changed) - 3} more"] if len(changed) > 3 else [])
    listed = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    return f"{listed} changed since this answer was recorded"


__all__ = ["changed_line", "changes", "secrets_at_hand"]
