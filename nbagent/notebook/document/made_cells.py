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

from ...engine.credentials.key_shapes import redact_shapes
from .bridge import REQUEST_TIMEOUT_S, Bridge, BridgeError, BridgeUnavailable
from .cell_log import cell_key
from .headless import executing_code, notebook_cells, notebook_with_cell
from .removal import mark_of

if TYPE_CHECKING:
    from .bridge_types import CellJSON


def made_keys(made: Mapping[str, str], redact: Callable[[str], str] | None) -> dict[str, str]:
    """Tool call id → fingerprint of the code its cell was made with, as saved in the record. A code
    holding a secret (one ``redact`` knows, or a literal it names as a credential: ``password="…"``)
    gets ``""`` (not compared): its unsalted digest would let whoever receives the notebook check
    guesses of it offline."""
    return {tool_use_id: "" if _holds_secret(code, redact) else cell_key(code) for tool_use_id, code in made.items()}


def _holds_secret(text: str, redact: Callable[[str], str] | None) -> bool:
    from ...engine.credentials.kernel_secrets import code_secrets

    return (redact is not None and redact(text) != text) or bool(code_secrets(text))


def hiding_literals(redact: Callable[[str], str]) -> Callable[[str], str]:
    """``redact``, and then the code's literals named as credentials (``connect(password="…")``),
    which no session's secrets hold when the user typed them into a cell after the turn."""
    from ...engine.credentials.kernel_secrets import code_secrets
    from ...engine.loop.sanitize import REDACTED

    def hide(text: str) -> str:
        text = redact(text)
        for secret in sorted(code_secrets(text), key=len, reverse=True):
            text = text.replace(secret, REDACTED)
        return text
    return hide


def edited_made_cells(made: Mapping[str, str], cells: Iterable[CellJSON],
                      redact: Callable[[str], str] = redact_shapes, *, session: str | None = None,
                      turn: int | None = None) -> list[str]:
    """The cells made by the recorded calls ``made`` whose text differs now, each named by its first
    line as it reads now, cleaned by ``redact`` (the user may have typed a key into it since: the line
    is shown and saved in the cell's output): "the cell `df.mean()` the agent made". A call whose cell is gone is not
    reported (the user deleted it: Run All no longer runs it); where several cells carry one call's
    mark (a copy the user pasted), one of them as made is enough. Tool call ids are unique within one
    conversation only (the offline model numbers them from 1 in each session), so a cell counts only
    where its mark names the recorded ``session`` and ``turn`` (where they are given)."""
    hide = hiding_literals(redact)
    now: dict[str, list[str]] = {}
    for cell in cells:
        mark = mark_of(cell)
        if mark is None or mark.get("kind") != "code" or (session is not None and mark.get("session") != session) \
                or (turn is not None and mark.get("turn") != turn):
            continue
        tool_use_id, source = mark.get("tool_use_id"), cell.get("source", "")
        if isinstance(tool_use_id, str) and made.get(tool_use_id):
            text = "".join(s for s in source if isinstance(s, str)) if isinstance(source, list) else str(source)
            now.setdefault(tool_use_id, []).append(text)
    changed = []
    for tool_use_id, texts in now.items():
        # A text holding a secret is never "as made" (made code with one was not recorded): a received
        # record's digest of a guess must not tell the user's secret from another value.
        if all(hide(text) != text or cell_key(text) != made[tool_use_id] for text in texts):
            first = next((line.strip() for line in hide(texts[0]).splitlines() if line.strip()), "")
            changed.append(f"the cell `{first[:60]}` the agent made" if first else "a cell the agent made (now empty)")
    return changed


CHECK_TIMEOUT_S = 3.0
"""How long a replay waits for the page's cells (it answers in milliseconds; a page gone would hold every agent cell)."""


def notebook_now(bridge: Bridge, root: Path, lean: bool = True) -> list[CellJSON] | None:
    """The notebook's cells as they are now: the front-end's, where a page answers (its unsaved
    edits included); else the file of the folder's one notebook holding the executing cell (a
    headless run: nbclient and papermill run the file as saved). None where neither can tell.
    ``lean``: texts and marks only (from a page), not outputs."""
    if bridge.connected:
        try:
            # Texts and marks are compared: a lean read is small per agent cell (no plots, no records),
            # and, advisory, it waits for a page that stopped answering only briefly, once.
            # With outputs (a notebook's plots: tens of MB), the time notebook_read itself gives a read.
            read = bridge.request_sync("read", CHECK_TIMEOUT_S, retry=False, lean=True) if lean \
                else bridge.request_sync("read", REQUEST_TIMEOUT_S, retry=False)
            return list(read.get("cells", []))
        except (BridgeUnavailable, BridgeError):
            return None
    name = notebook_with_cell(root, executing_code())
    return notebook_cells(root / name) if name is not None else None


__all__ = ["edited_made_cells", "made_keys", "notebook_now"]
