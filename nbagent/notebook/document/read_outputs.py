"""The outputs of the cells ``notebook_read`` showed the model, as an input of its recorded answer.

The kernel context quotes a cell's ``Out[n]`` only; what a cell *printed* or *displayed*
(``print(total)``, ``display(df.describe())``, a plot) the model sees by reading the notebook. An
answer read off such an output ("the notebook prints a total revenue of 567.75") is stale once the
data behind it changed, although no variable, file or cell text the turn recorded did. So a live
turn keeps, per cell it read, a digest of that cell's outputs as the model read them (texts and
images; not execution counts), and a replay compares it with the cell's outputs as the front-end
holds them then — only for a cell that has run in this kernel by then (one further down, or not
run yet, still shows the outputs of an earlier run, or none).

Left out: the agent's own cell, other agent cells (their transcript reads otherwise once replayed),
cells of ``%`` magics only (set-up), a cell the turn ran itself with ``notebook_run`` (its outputs
are the turn's work), markdown notes (a read takes those below the agent cell too, filled in after
the answer), what a cell writes to stderr (warnings naming the kernel's pid in their path, progress
bars), ``%%time``'s and ``%%timeit``'s lines and a progress line's timing (another text at every run).

An output holding a secret is compared as the model read it, the secret ``[redacted]`` on both
sides: its digest says nothing of the secret (a received record cannot check a guess of it), and a
changed ``Engine(postgresql://ana:***@db/sales)`` still makes the answer read off it stale.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import TYPE_CHECKING, Callable, Iterable, Mapping

from ..view.safe import RASTER_IMAGES
from .cell_log import is_agent_cell, settings_only
from .cells import MARK, literal_secrets, output_text, shown_output
from .fingerprint import without_addresses
from .inputs import notebook_read
from .made_cells import edited_made_cells, notebook_now

if TYPE_CHECKING:
    from pathlib import Path

    from .bridge import Bridge
    from .bridge_types import CellJSON
    from .inputs import TurnInputs


def _source(cell: CellJSON) -> str:
    source = cell.get("source", "")
    return "".join(s for s in source if isinstance(s, str)) if isinstance(source, list) else str(source)




_TIMING = re.compile(r"^(?:CPU times|Wall time): .*$|^.* per loop \(mean ± std\. dev\. of .*\)$"
                     r"|^The slowest run took .* times longer than the fastest\..*\n?", re.MULTILINE)
"""What ``%%time`` and ``%%timeit`` print: other figures (and loop counts) each run; ``%%timeit``'s
"slowest run" line only on some runs (so that one goes with its line's end)."""


_PROGRESS = re.compile(r"(?:(?<![\w.])\d+(?:ms|s|m)[ \t])?(?<![\w.])\d+(?:\.\d+)?(?:ms|s|us|µs)/step\b"
                       r"|\[\d+:\d\d(?::\d\d)?<[\d:?]+,[ \t]*[\d.?]+(?:it/s|s/it)\]")
"""A progress line's timing, in the formats only progress lines print: Keras's ``1s 12ms/step`` and
tqdm's ``[00:03<00:00, 45.10it/s]`` (on stdout when a script sends it there): another figure each
run. A duration a cell prints itself (``trained in 3.2 s``, a latency) is data, and compared."""


def outputs_digest(cell: CellJSON, hide: Callable[[str], str] | None = None) -> str:
    """A digest of ``cell``'s outputs as ``notebook_read`` shows them (each output's text without
    memory addresses, and the data of its image); ``hide``: the redaction the model's read had
    (:func:`hiding`), so that no secret goes into the digest."""
    shown: list[list[str]] = []
    for output in cell.get("outputs") or []:
        if output.get("output_type") == "stream" and output.get("name") == "stderr":
            continue  # warnings (their path names the kernel's pid), progress bars: another text each run
        text = _TIMING.sub("", output_text(output))
        if hide is not None:
            text = hide(text)
        text = _PROGRESS.sub("<timing>", without_addresses(text))
        data = output.get("data") or {}
        image = next((data[m] for m in RASTER_IMAGES if isinstance(data.get(m), str)), "")
        shown.append([text, image.replace("\n", "")])
    return hashlib.sha256(json.dumps(shown).encode()).hexdigest()[:32]


def _compared(cell: CellJSON, executing: str | None) -> bool:
    """Whether a read cell's outputs are an input: a code cell of the user's or the agent's code, not
    an agent cell (this one or another), not a cell of ``%`` set-up only."""
    mark = (cell.get("metadata") or {}).get(MARK)
    source = _source(cell)
    return (cell.get("cell_type", "code") == "code" and isinstance(cell.get("id"), str) and cell.get("id") != executing
            and not (isinstance(mark, dict) and mark.get("kind") == "agent")
            and not is_agent_cell(source) and source.strip() != "" and not settings_only(source))


def hiding(redact: Callable[[str], str] | None, secrets: tuple[str, ...]) -> Callable[[str], str]:
    """What ``notebook_read`` hides of an output's text (:func:`~.cells.shown_output`): ``secrets``
    (the notebook's literal ones: a literal of one cell printed by another), a printed ``.env``'s
    values, and what ``redact`` redacts."""
    def hide(text: str) -> str:
        return shown_output(text, redact, secrets)
    return hide


def read_digests(cells: Iterable[CellJSON], executing: str | None,
                 hide: Callable[[str], str] | None) -> dict[str, str]:
    """Cell id → :func:`outputs_digest` for the read code cells whose outputs are an input."""
    # Markdown notes are not compared: a read takes the cells below the agent cell too, and a
    # note filled in after the answer ("## Results") would read as changed at every replay.
    return {str(cell["id"]): outputs_digest(cell, hide) for cell in cells if _compared(cell, executing)}


def source_digest(cell: CellJSON, hide: Callable[[str], str]) -> str:
    """A digest of a read cell's text as the model read it (its secrets hidden, as in a read)."""
    return hashlib.sha256(hide(_source(cell)).strip().encode()).hexdigest()[:32]


def record_read(cells: Iterable[CellJSON], executing: str | None, redact: Callable[[str], str] | None,
                secrets: tuple[str, ...]) -> None:
    """Tell a live turn's watch (if any) the outputs and texts ``notebook_read`` showed the model of
    ``cells``; ``secrets``: the notebook's literal ones (see :func:`hiding`)."""
    cells, hide = list(cells), hiding(redact, secrets)
    notebook_read(read_digests(cells, executing, hide),
                  {str(cell["id"]): source_digest(cell, hide) for cell in cells if _compared(cell, executing)})


def record_replaced(cell_id: str) -> None:
    """The turn's ``notebook_edit`` replaced a cell's text, or its ``notebook_run`` ran it: the
    outputs and text read of it, before or after, are no input."""
    notebook_read({cell_id: None}, {cell_id: None})


def changed_read_outputs(recorded: Mapping[str, str], cells: Iterable[CellJSON], ran: Mapping[str, str],
                         redact: Callable[[str], str]) -> list[str]:
    """The read cells whose outputs differ now, each named by its first line as it reads now
    (redacted: the line is saved in the cell's output): "the output of the cell `…`". Only a
    cell that has run in this kernel by now (``ran``: cell id → text, the kernel's cell log); one
    deleted since is not reported. Outputs are compared as a read shows them now (``redact``, then
    the notebook's literal secrets), as the turn recorded them."""
    cells = list(cells)
    hide = hiding(redact, literal_secrets(cells))
    changed = []
    for cell in cells:
        cell_id = cell.get("id")
        if not isinstance(cell_id, str) or cell_id not in recorded:
            continue
        first = next((line.strip() for line in hide(_source(cell)).splitlines() if line.strip()), "")
        if cell_id in ran and outputs_digest(cell, hide) != recorded[cell_id]:
            changed.append(f"the output of the cell `{first[:60]}`" if first else "the output of a cell above")
    return changed


def changed_read_sources(recorded: Mapping[str, str], cells: Iterable[CellJSON], in_context: Iterable[str],
                         redact: Callable[[str], str], executing: str | None = None) -> list[str]:
    """The read cells whose text differs now: "the cell `…` the model read". Only cells above the
    agent cell replaying (``executing``; all without it): one below it is where the notebook goes on
    after the answer, rewritten at will. Not one among the recent cells the kernel context gave the
    model (``in_context``: their ids; compared as those), nor one deleted since; whether it ran here
    or not (Run All runs the text the page holds)."""
    cells, skip = list(cells), set(in_context)
    at = next((i for i, cell in enumerate(cells) if cell.get("id") == executing), None)
    hide = hiding(redact, literal_secrets(cells))
    changed = []
    for cell in cells[:at]:
        cell_id = cell.get("id")
        if not isinstance(cell_id, str) or cell_id not in recorded or cell_id in skip:
            continue
        if source_digest(cell, hide) != recorded[cell_id]:
            first = next((line.strip() for line in hide(_source(cell)).splitlines() if line.strip()), "")
            changed.append(f"the cell `{first[:60]}` the model read" if first else "a cell the model read")
    return changed


def _replaying_cell(cells: list[CellJSON]) -> str | None:
    """The id of the agent cell replaying: the one the page runs; headless (nbclient sends no cell
    id), the first cell holding the code that runs, as the file was found by it (:func:`notebook_now`).
    Without it every cell below the agent cell, where work goes on after the answer, was compared."""
    from .bridge import executing_cell_id  # not at the kernel's start (tests/test_layering.py)
    from .headless import executing_code

    executing = executing_cell_id()
    if executing is not None:
        return executing
    code = executing_code()
    held = next((c.get("id") for c in cells if code is not None and _source(c) == code), None)
    return held if isinstance(held, str) else None


def notebook_changes(bridge: Bridge, root: Path, inputs: TurnInputs, session: str, turn: int,
                     redact: Callable[[str], str], ran: Mapping[str, str]) -> list[str]:
    """What changed of the inputs the notebook itself holds: the cells the turn's code became
    (:mod:`.made_cells`), and the outputs ``notebook_read`` showed the model — read with the cells'
    outputs only where there are some to compare, and only from a page (headless, no cell has run
    here by an id, and the file's outputs are those of its last save)."""
    cells = notebook_now(bridge, root, lean=not (inputs.read_outputs and bridge.connected))
    if cells is None:
        return []
    changed = edited_made_cells(inputs.made, cells, redact, session=session, turn=turn) if inputs.made else []
    if inputs.read_sources:
        changed += changed_read_sources(inputs.read_sources, cells, inputs.cell_ids.values(), redact,
                                        _replaying_cell(cells))
    if inputs.read_outputs and bridge.connected:
        changed += changed_read_outputs(inputs.read_outputs, cells, ran, redact)
    return changed


__all__ = ["changed_read_outputs", "changed_read_sources", "hiding", "notebook_changes", "outputs_digest",
           "read_digests", "record_read", "record_replaced", "source_digest"]
