"""The code cells a turn's ``python`` calls became, as an input of its recorded answer.

A replayed answer quotes the code it ran ("north has the largest total, computed by
``df.groupby('region').sum()``"), and Run All then runs the cells that code became, below the agent
cell. A user who edits one of those cells (``.sum()`` → ``.mean()``) changes what the answer is
about, so the record keeps, per tool call, the fingerprint of the code its cell was made with, and
a replay compares it with the cell as the notebook holds it now: through the front-end where one
answers (JupyterLab, Notebook 7), else from the notebook's file in the folder (nbclient, papermill).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable, Mapping

from ...engine.loop.sanitize import redact_shapes
from .bridge import Bridge, BridgeError, BridgeUnavailable
from .headless import executing_code, notebook_cells, notebook_with_cell
from .inputs import cell_key
from .removal import mark_of

if TYPE_CHECKING:
    from .bridge_types import CellJSON


def made_keys(made: Mapping[str, str], redact: Callable[[str], str] | None) -> dict[str, str]:
    """Tool call id → fingerprint of the code its cell was made with, as saved in the record. A code
    holding a secret gets ``""`` (not compared): its unsalted digest would let whoever receives the
    notebook check guesses of it offline."""
    return {tool_use_id: "" if redact is not None and redact(code) != code else cell_key(code)
            for tool_use_id, code in made.items()}


def edited_made_cells(made: Mapping[str, str], cells: Iterable[CellJSON],
                      redact: Callable[[str], str] = redact_shapes) -> list[str]:
    """The cells made by the recorded calls ``made`` whose text differs now, each named by its first
    line as it reads now, cleaned by ``redact`` (the user may have typed a key into it since: the line
    is shown and saved in the cell's output): "the cell `df.mean()` the agent made". A call whose cell is gone is not
    reported (the user deleted it: Run All no longer runs it); where several cells carry one call's
    mark (a copy the user pasted), one of them as made is enough."""
    now: dict[str, list[str]] = {}
    for cell in cells:
        mark = mark_of(cell)
        tool_use_id = mark.get("tool_use_id") if mark is not None and mark.get("kind") == "code" else None
        if isinstance(tool_use_id, str) and made.get(tool_use_id):
            source = cell.get("source", "")
            now.setdefault(tool_use_id, []).append("".join(source) if isinstance(source, list) else str(source))
    changed = []
    for tool_use_id, texts in now.items():
        # A text holding a secret is never "as made" (made code with one was not recorded): a received
        # record's digest of a guess must not tell the user's secret from another value.
        if all(redact(text) != text or cell_key(text) != made[tool_use_id] for text in texts):
            first = next((line.strip() for line in redact(texts[0]).splitlines() if line.strip()), "")
            changed.append(f"the cell `{first[:60]}` the agent made" if first else "a cell the agent made (now empty)")
    return changed


def notebook_now(bridge: Bridge, root: Path) -> list[CellJSON] | None:
    """The notebook's cells as they are now: the front-end's, where a page answers (its unsaved
    edits included); else the file of the folder's one notebook holding the executing cell (a
    headless run: nbclient and papermill run the file as saved). None where neither can tell."""
    if bridge.connected:
        try:
            # Texts and marks are compared: without outputs, a notebook of plots is a small read per agent cell
            return list(bridge.request_sync("read", outputs=False).get("cells", []))
        except (BridgeUnavailable, BridgeError, RecursionError):  # a received notebook's metadata nested past the stack
            return None
    name = notebook_with_cell(root, executing_code())
    return notebook_cells(root / name) if name is not None else None


__all__ = ["edited_made_cells", "made_keys", "notebook_now"]
