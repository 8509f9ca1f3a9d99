"""What changed since a turn was recorded: its inputs (:mod:`.inputs`) compared when its cell
replays, each named as a user would ("`sales`", "sales.csv", "the cell `df = load()`")."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Mapping

from .fingerprint import file_fingerprint, fingerprint, library_paths, shown_fingerprint
from .inputs import CellLog, TurnInputs, cell_key, followed, ran_inputs

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell

    from ..kernel_context.figures import DisplayedImages


def changes(inputs: TurnInputs, shell: InteractiveShell, root: Path, log: CellLog | None = None,
            displayed: DisplayedImages | None = None) -> list[str]:
    """What changed since the turn was recorded, each named as a user would ("`sales`",
    "sales.csv"); empty when everything it depended on is as it was."""
    ns = shell.user_ns
    changed: list[str] = []
    for name, fp in inputs.read.items():
        if name not in ns:
            changed.append(f"`{name}` (no longer defined)")
        elif not _as_found_or_left(fingerprint(ns[name]), fp, inputs.left_values.get(name)):
            changed.append(f"`{name}`")
    for name, fp in inputs.shown.items():
        if name in ns and not _as_found_or_left(shown_fingerprint(ns[name]), fp, inputs.left_values.get(name)):
            changed.append(f"`{name}`")
    changed += _changed_files(inputs.files, root)
    if inputs.cells:
        changed += _changed_cells(inputs, shell, log)
    if inputs.outputs:
        changed += _changed_outputs(inputs, shell)
    if inputs.images and displayed is not None:
        changed += _changed_images(inputs, shell, displayed)
    return changed


def _changed_images(inputs: TurnInputs, shell: InteractiveShell, displayed: DisplayedImages) -> list[str]:
    """A cell whose displayed image the model was sent, that has run here by then and displayed other
    images. One that has not run here, or whose images are no longer kept, is not reported."""
    latest = {cell_key(source): n for n, source in enumerate(ran_inputs(shell)) if source.strip()}
    changed = []
    for key, digest in inputs.images.items():
        n = latest.get(key)
        now = displayed.digest_of(n) if n is not None else None
        if now is not None and now != digest:
            line = inputs.cells.get(key)
            changed.append(f"the image of the cell `{line}`" if line else "the image of a cell above")
    return changed


def _changed_outputs(inputs: TurnInputs, shell: InteractiveShell) -> list[str]:
    """A cell whose ``Out[n]`` the model was told, that has run here by now with another value (or
    none). One that has not run here (deleted, or further down) is not reported."""
    raw, out = ran_inputs(shell), shell.user_ns.get("Out", {})
    latest = {cell_key(source): n for n, source in enumerate(raw) if source.strip()}
    changed = []
    for key, fp in inputs.outputs.items():
        n = latest.get(key)
        if n is None:
            continue
        now = fingerprint(out[n]) if isinstance(out, dict) and n in out else None
        if now != fp:
            line = inputs.cells.get(key)
            changed.append(f"the output of the cell `{line}`" if line else "the output of a cell above")
    return changed


def _as_found_or_left(now: str | None, found: str, left: str | None) -> bool:
    """As the turn found it, or as its own work left it (a cell it fixed, above the agent cell)."""
    return now is not None and now in (found, left)


def _changed_files(files: Mapping[str, str], root: Path) -> list[str]:
    """The recorded files whose bytes differ now. A record may be received: a name that would not
    have been recorded here (absolute, ``..``, hidden, through a symlink) is never opened."""
    root, libraries = root.resolve(), library_paths()
    changed = []
    for rel, fp in files.items():
        full = os.path.realpath(root / rel)
        if followed(full, root, libraries) != rel:
            changed.append(f"{rel} (not a file of this folder)")
            continue
        now = file_fingerprint(Path(full))
        if now is None:
            changed.append(f"{rel} (not a regular file)" if os.path.lexists(full) else f"{rel} (missing)")
        elif now != fp:
            changed.append(rel)
    return changed


def _changed_cells(inputs: TurnInputs, shell: InteractiveShell, log: CellLog | None) -> list[str]:
    """A cell in context whose id ran with other text by now is changed; one whose id has not run
    here (deleted, or further down) is not reported — like a variable only shown. Without ids
    (a headless recording) a text that has not run here by now is changed."""
    ran = {cell_key(s) for s in ran_inputs(shell)}
    changed = []
    for key, line in inputs.cells.items():
        cell_id = inputs.cell_ids.get(key)
        if cell_id is not None:
            now = log.latest.get(cell_id) if log is not None else None
            if now is not None and not _as_found_or_left(cell_key(now), key, inputs.left_cells.get(cell_id)):
                # Named as it reads now, where the user can find it (the turn may have fixed its first
                # line since: the recorded one names a text no longer in the notebook).
                first = now.strip().splitlines()[0][:60] if now.strip() else line
                changed.append(f"the cell `{first}`")
        elif key not in ran:
            changed.append(f"the cell `{line}`")
    return changed


def changed_line(changed: list[str]) -> str:
    """One line naming what changed: "`sales` changed since this answer was recorded"."""
    names = changed[:3] + ([f"{len(changed) - 3} more"] if len(changed) > 3 else [])
    listed = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    return f"{listed} changed since this answer was recorded"


__all__ = ["changed_line", "changes"]
