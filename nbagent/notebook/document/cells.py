"""Cells as the notebook stores them (nbformat 4.5 dicts), and cells as the model reads them.

Outputs of the model's code are untrusted: every display bundle goes through the same mime
allow-list as the agent view (:func:`~nbagent.notebook.view.safe.safe_display_data`) before it
enters the document, so a materialised cell can never carry script.
"""

from __future__ import annotations

import hashlib
import uuid
from typing import TYPE_CHECKING, Callable, Iterable

from ...engine.contracts.tool_api import truncate_middle
from ...engine.credentials.kernel_secrets import code_secrets
from ...engine.credentials.output_secrets import output_secrets
from ...engine.credentials.secret_forms import REDACTED
from ..view.safe import RASTER_IMAGES, safe_display_data
from .bridge_types import CellJSON, OutputJSON

if TYPE_CHECKING:
    from ...engine.contracts.json_types import JSONObject
    from ...engine.contracts.message_types import ImageBlockParam
    from ..executor import ExecutionRecord

MARK = "nbagent"
"""The cell-metadata key nbagent owns: ``{"origin", "session", "turn", "tool_use_id", "kind", ...}``."""
ORIGIN = uuid.uuid4().hex
"""This kernel process's token in the marks of the cells it makes (never reused, never guessed):
a received notebook's marks, or marks from before a restart, are never this kernel's."""


def source_hash(source: str) -> str:
    """What read-before-edit compares: a cell is unchanged while this is."""
    return hashlib.sha256(source.encode()).hexdigest()[:16]


def _lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def _error_output(error: str) -> OutputJSON:
    last = error.rstrip("\n").splitlines()[-1] if error.strip() else "Error"
    name, _, value = last.partition(":")
    return {"output_type": "error", "ename": name.strip() or "Error", "evalue": value.strip(),
            "traceback": error.rstrip("\n").splitlines()}


def outputs_of(record: ExecutionRecord) -> list[OutputJSON]:
    """An execution (:class:`~nbagent.notebook.executor.ExecutionRecord`) as nbformat outputs, in
    the order a cell shows them: stdout, stderr, displays, the value, the error."""
    result = record.result
    outputs: list[OutputJSON] = []
    for name, text in (("stdout", result.stdout), ("stderr", result.stderr)):
        if text:
            outputs.append({"output_type": "stream", "name": name, "text": text})
    for shown in record.displays:
        data = safe_display_data(dict(shown.get("data") or {}))
        if data:
            outputs.append({"output_type": "display_data", "data": data, "metadata": {}})
    if result.result_repr is not None:
        data = safe_display_data({**(result.rich or {}), "text/plain": result.result_repr})
        outputs.append({"output_type": "execute_result", "data": data, "metadata": {}, "execution_count": None})
    if result.error:
        outputs.append(_error_output(result.error))
    return outputs


def ran_as(outputs: list[OutputJSON], execution_count: int | None) -> list[OutputJSON]:
    """``outputs`` with their ``execute_result`` numbered ``execution_count`` (as the kernel numbers
    a cell's value)."""
    return [{**o, "execution_count": execution_count} if o.get("output_type") == "execute_result" else o
            for o in outputs]


def code_cell(source: str, outputs: list[OutputJSON], mark: JSONObject,
              execution_count: int | None = None) -> CellJSON:
    """A code cell to insert: its source exactly as run, its outputs, nbagent's metadata, and the
    execution count it ran under (the agent cell's ``[N]``: it ran, it is not ``[ ]``)."""
    return {"cell_type": "code", "source": source, "outputs": ran_as(outputs, execution_count),
            "execution_count": execution_count, "metadata": {MARK: mark}}


def output_text(output: OutputJSON) -> str:
    """An output as the model reads it: its text (an error as ``Name: value``), an image named."""
    kind = output.get("output_type")
    if kind == "stream":
        text = output.get("text", "")
        return "".join(text) if isinstance(text, list) else str(text)
    if kind == "error":
        return f"{output.get('ename', 'Error')}: {output.get('evalue', '')}"
    data = output.get("data") or {}
    text = data.get("text/plain", "")
    text = "".join(text) if isinstance(text, list) else str(text)
    images = [m for m in RASTER_IMAGES if m in data]
    return text + (f" [{images[0]} shown below]" if images else "")


def _origin(cell: CellJSON) -> str:
    """Who wrote the cell, as the model reads it: the user typed an agent cell (its mark only holds
    the record) and every cell the model edited; only materialised cells are the agent's own."""
    mark = (cell.get("metadata") or {}).get(MARK)
    if not isinstance(mark, dict):
        return ""
    kind, turn = mark.get("kind"), mark.get("turn")
    if kind == "external":
        return f", by MCP client {mark.get('client')}"
    if kind == "agent":
        return f", the user's agent prompt (turn {turn})"
    if kind == "rollback":  # the user's %agent rollback cell: the mark says only what it rolled back
        return ""
    if kind == "edit":
        return f", edited by the agent (turn {turn})"
    if mark.get("origin") != ORIGIN:  # a received notebook's mark (or one from before a restart): a claim only
        return f", marked as an agent's (turn {turn}; not made in this kernel)"
    return f", by the agent (turn {turn})"


def literal_secrets(cells: Iterable[CellJSON]) -> tuple[str, ...]:
    """The secrets the code cells' literals hold (``connect(password="…")``), longest first. A cell
    not run yet is in no ``_i`` variable, so these are no secret the loop knows, and its saved
    outputs (a received notebook's, or from before a restart) show them too."""
    found = (secret for cell in cells if cell.get("cell_type", "code") == "code"
             for secret in code_secrets(_text(cell.get("source", ""))))
    return tuple(sorted(dict.fromkeys(found), key=len, reverse=True))


def _text(source: object) -> str:
    return "".join(source) if isinstance(source, list) else str(source)


def without_secrets(text: str, secrets: tuple[str, ...]) -> str:
    """``text`` with each of ``secrets`` (see :func:`literal_secrets`) redacted."""
    for secret in secrets:
        text = text.replace(secret, REDACTED)
    return text


def cell_for_model(index: int, cell: CellJSON, output_chars: int, redact: Callable[[str], str] | None = None,
                   secrets: tuple[str, ...] | None = None) -> tuple[str, list[ImageBlockParam]]:
    """One cell as text for the model, plus its images as image blocks; its outputs are
    redacted with ``redact`` (the loop's :attr:`~nbagent.engine.contracts.tool_api.ToolContext.redact`)
    before they are cut to ``output_chars``, so a secret the cut would split is redacted whole.
    ``secrets``: the notebook's :func:`literal_secrets` (None: this cell's own), redacted from its
    source and outputs."""
    source = _text(cell.get("source", ""))
    secrets = literal_secrets([cell]) if secrets is None else secrets
    source = without_secrets(source, secrets) if cell.get("cell_type", "code") == "code" else source
    head = f"[{index}] id={cell.get('id')} {cell.get('cell_type', 'code')}{_origin(cell)}"
    parts = [head, source if source else "(empty)"]
    images: list[ImageBlockParam] = []
    texts: list[str] = []
    for output in cell.get("outputs") or []:
        texts.append(output_text(output))
        data = output.get("data") or {}
        for mime in RASTER_IMAGES:
            if isinstance(data.get(mime), str):
                images.append({"type": "image", "source": {"type": "base64", "media_type": mime,
                                                           "data": data[mime].replace("\n", "")}})
                break
    if texts:
        shown = shown_output("\n".join(t for t in texts if t), redact, secrets)
        parts.append("outputs:\n" + truncate_middle(shown, output_chars))
    return "\n".join(parts), images


def shown_output(text: str, redact: Callable[[str], str] | None, secrets: tuple[str, ...]) -> str:
    """An output's text as the model is shown it: without ``secrets`` (the notebook's
    :func:`literal_secrets`), the values of a printed ``.env`` (no variable holds them), and what
    ``redact`` redacts. A replay's digest of a read output hides the same (:mod:`.read_outputs`)."""
    shown = without_secrets(text, secrets)
    shown = without_secrets(shown, output_secrets(shown))
    return redact(shown) if redact else shown
