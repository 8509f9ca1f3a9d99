"""The record that travels with the notebook: each agent cell's turn, signed, in its own metadata.

A notebook emailed, committed or uploaded without its ``.nbagent/`` folder still replays in
JupyterLab and Notebook 7: when a live turn ends, the bridge writes the turn's record into the
agent cell's metadata (``metadata.nbagent.record``), and these front-ends send a cell's metadata
with every execute request (``{...cell.metadata, cellId}``), so the kernel reads it back when the
cell runs again — no file, no notebook path needed. nbclient sends no metadata: a headless run
reaches only the folder.

The record holds what the replay shows (the transcript, compressed), how the turn ended, what it
depended on (:mod:`.inputs`) and a summary for ``%agent status``; it is signed with this user's
key over all of it. A record signed by someone else (a notebook you received) is not trusted: it
never runs anything or grants anything, its HTML is never shown — only its plain text, marked as
received, with its inputs compared.
"""

from __future__ import annotations

import base64
import hashlib
import json
import zlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Mapping

from ...engine.disk.json_depth import loads_within
from ...engine.disk.user_key import sign, signed_by_user
from ..fix_prompt import is_fix_prompt
from .bridge import executing_request
from .inputs import TurnInputs
from .replay import is_session_name
from .shown import MIMES, Ended

if TYPE_CHECKING:
    from ...engine.contracts.json_types import JSONObject

VERSION = 1
MAX_TRANSCRIPT_BYTES = 32 * 1024
"""The compressed transcript kept per agent cell (base64); beyond it only the plain text is kept
(itself cut to the bound), so a notebook grows by a bounded amount per agent cell."""
MAX_UNPACKED_BYTES = 2 * 1024 * 1024
"""The transcript uncompressed (its JSON, UTF-8), at most: zlib packs up to about 1000:1, so a
record within :data:`MAX_TRANSCRIPT_BYTES` could otherwise unpack to tens of MB, and a forged one
in a received notebook (decompression bomb) to far more. Kept like the compressed bound, and a
record past either is refused unread."""
_CUT_NOTE = "\n… [cut: the record in the notebook is bounded]"


def prompt_hash(prompt: str) -> str:
    return hashlib.sha256(prompt.strip().encode()).hexdigest()[:32]


def _pack(bundle: dict[str, str]) -> str | None:
    """The bundle as JSON, zlib-compressed and base64-encoded; None when it is beyond either bound."""
    raw = json.dumps(bundle, ensure_ascii=False).encode()
    if len(raw) > MAX_UNPACKED_BYTES:
        return None
    packed = base64.b64encode(zlib.compress(raw, 9)).decode("ascii")
    return packed if len(packed) <= MAX_TRANSCRIPT_BYTES else None


def _unpack(packed: str) -> dict[str, str] | None:
    """The bundle a record carries; None when it is malformed or beyond the bounds :func:`_pack`
    keeps, checked before decoding and while inflating (never more than the bound is allocated)."""
    if len(packed) > MAX_TRANSCRIPT_BYTES:
        return None
    inflate = zlib.decompressobj()
    try:
        # One byte past the bound tells "exactly at the bound" from "more than it".
        raw = inflate.decompress(base64.b64decode(packed, validate=True), MAX_UNPACKED_BYTES + 1)
        if len(raw) > MAX_UNPACKED_BYTES or not inflate.eof:  # past the bound, or truncated
            return None
        bundle = loads_within(raw)
    except (ValueError, zlib.error):  # not JSON, or ``[[[…`` nested past the bound
        return None
    if not isinstance(bundle, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in bundle.items()):
        return None
    return bundle


def _bounded(bundle: dict[str, str]) -> tuple[str, bool]:
    """The packed transcript within the bounds, and whether its HTML was dropped."""
    packed = _pack(bundle)
    if packed is not None:
        return packed, False
    text = bundle.get("text/plain", "")
    while (packed := _pack({"text/plain": text})) is None:
        text = text[: len(text) // 2] + _CUT_NOTE
    return packed, True


def make_record(*, session: str, turn: int, prompt: str, cell_id: str, provider: str | None,
                bundle: Mapping[str, str], done: Ended | None, inputs: TurnInputs | None,
                summary: JSONObject, options: JSONObject | None = None) -> JSONObject | None:
    """The signed record of one live turn, for its agent cell's metadata (None without a transcript).
    ``options``: the session options the cell's line gave (the line is not signed: a replay carries
    these, :func:`~.replayed_options.signed_options`)."""
    kept = {m: bundle[m] for m in MIMES if isinstance(bundle.get(m), str)}
    if len(kept) != len(MIMES) or done is None:
        return None
    packed, text_only = _bounded(kept)
    body: JSONObject = {"version": VERSION, "session": session, "turn": turn, "prompt": prompt_hash(prompt), "cell_id": cell_id,
            "provider": provider, "outcome": {"reason": str(done.reason), "error": done.error},
            "inputs": inputs.to_json() if inputs is not None else None, "transcript": packed,
            "text_only": text_only, "summary": summary, "options": options or {}}
    if is_fix_prompt(prompt):
        body["fix"] = True  # what `%agent fix` shows of it when nothing has failed (command_replay)
    return {**body, "signature": sign(body)}


@dataclass(frozen=True)
class NotebookRecord:
    """A turn as an agent cell's metadata carries it, checked."""

    session: str
    turn: int
    bundle: dict[str, str]
    reason: str
    error: str | None
    inputs: TurnInputs | None
    summary: JSONObject
    provider: str | None
    mine: bool
    """Signed with this user's key; False: a notebook received from someone else (text only)."""
    undone: bool = False
    """The cell's mark says ``%agent rollback`` undid this turn (the record travels without the folder)."""
    undone_signed: bool = False
    """``undone`` is in the signed record (as ``%agent rollback`` writes it now), not only in the mark
    beside it, which anyone can add (and rollbacks before the signing wrote alone)."""
    fix: bool = False
    """The turn answered ``%agent fix`` (a record without the mark answered another prompt)."""
    options: JSONObject | None = None
    """The session options the cell's line gave (None: a record from before they were kept)."""


def _fields_ok(record: JSONObject) -> bool:
    types = {"session": str, "turn": int, "prompt": str, "cell_id": str, "outcome": dict, "transcript": str,
             "text_only": bool, "summary": dict}
    provider, outcome = record.get("provider"), record.get("outcome")
    return record.get("version") == VERSION and all(isinstance(record.get(k), t) for k, t in types.items()) \
        and is_session_name(record["session"]) and isinstance(outcome, dict) and isinstance(outcome.get("reason"), str) \
        and (provider is None or isinstance(provider, str))


# An older record has no window and no cache counts: they read as unknown, never 0.
_COUNTS = ("requests", "input_tokens", "cache_write_tokens", "cache_read_tokens", "output_tokens", "retries",
           "context_window")


def _summary(summary: JSONObject) -> JSONObject:
    """The summary fields :func:`~.recording.turn_summary` writes, of the types it writes; any other is
    left out (read as unknown). A received notebook's record is not signed by you: a count that
    is not a count (``"requests": "many"``) failed ``%agent status`` and ``%agent cost`` there, and
    so stopped Run All."""
    import math

    kept: JSONObject = {}
    model, cost = summary.get("model"), summary.get("cost_usd")
    if isinstance(model, str):
        kept["model"] = model
    for name in _COUNTS:
        value = summary.get(name)
        if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 10**15:
            kept[name] = value
    wait = summary.get("rate_limit_wait_s")
    if isinstance(wait, (int, float)) and not isinstance(wait, bool) and math.isfinite(wait) and 0 <= wait < 10**9:
        kept["rate_limit_wait_s"] = wait
    good_cost = isinstance(cost, (int, float)) and not isinstance(cost, bool) and math.isfinite(cost) and 0 <= cost < 10**9
    kept["cost_usd"] = cost if good_cost else None  # unknown, never 0
    return kept


def read_record(metadata: object, prompt: str | None, cell_id: str | None) -> NotebookRecord | None:
    """The record in an executing cell's metadata, if it is this cell's and for this prompt (an
    edited prompt is a new question; None: whatever its prompt); None when there is none or it is
    malformed."""
    mark = metadata.get("nbagent") if isinstance(metadata, dict) else None
    record = mark.get("record") if isinstance(mark, dict) else None
    if not isinstance(record, dict) or not _fields_ok(record):
        return None
    edited = prompt is not None and record["prompt"] != prompt_hash(prompt)
    if edited or cell_id is None or record["cell_id"] != cell_id:
        return None
    bundle = _unpack(record["transcript"])
    try:
        inputs = TurnInputs.from_json(record["inputs"]) if record.get("inputs") is not None else None
    except ValueError:
        inputs = None
    if bundle is None or "text/plain" not in bundle:
        return None
    body = {k: v for k, v in record.items() if k != "signature"}
    mine = signed_by_user(record.get("signature"), body)
    if not mine or record["text_only"] or "text/html" not in bundle:
        bundle = {"text/plain": bundle["text/plain"]}  # someone else's HTML never reaches the page
    error = record["outcome"].get("error")
    # Undone in the record (signed, see undone.undone_record) or in the mark beside it (unsigned: as rollbacks wrote it before)
    undone = record.get("undone") is True or (isinstance(mark, dict) and mark.get("undone") is True)
    return NotebookRecord(record["session"], record["turn"], bundle, record["outcome"]["reason"],
                          error if isinstance(error, str) else None, inputs, _summary(record["summary"]),
                          record.get("provider"), mine, undone=undone,
                          undone_signed=mine and record.get("undone") is True,
                          fix=record.get("fix") is True, options=_options(record))


def _options(record: JSONObject) -> JSONObject | None:
    """The record's session options; malformed ones give none (None only where there are none)."""
    if "options" not in record:
        return None
    options = record["options"]
    return options if isinstance(options, dict) else {}


def not_this_cells(metadata: object, prompt: str, cell_id: str | None) -> tuple[str, int] | None:
    """Why the record in the cell's metadata is not replayed for it, with the turn it answered:
    ``"edited"`` (the record of a prompt the user edited since: in this cell, or in a copy of it, or a
    cell merged from the agent cell and another, which keeps its metadata under a new id) or
    ``"copied"`` (the record of another cell, for this very prompt: this one is a copy the user
    pasted or duplicated); None where it carries no such record. What a cell going live says,
    instead of "its last run did not finish"."""
    mark = metadata.get("nbagent") if isinstance(metadata, dict) else None
    record = mark.get("record") if isinstance(mark, dict) else None
    if not isinstance(record, dict) or not _fields_ok(record) or cell_id is None:
        return None
    if record["prompt"] != prompt_hash(prompt):
        return "edited", record["turn"]
    return ("copied", record["turn"]) if record["cell_id"] != cell_id else None


def in_kernel() -> bool:
    """Whether this process is a Jupyter kernel (not plain IPython in a terminal)."""
    try:
        from ipykernel.kernelbase import Kernel
    except ImportError:
        return False
    return bool(Kernel.initialized())


def executing_metadata() -> JSONObject:
    """The metadata of the execute request being run: JupyterLab and Notebook 7 send the cell's
    own metadata in it (nbclient and consoles send none)."""
    metadata = executing_request().get("metadata")
    return metadata if isinstance(metadata, dict) else {}


def was_recorded(metadata: JSONObject) -> bool:
    """Whether the cell says a turn was recorded from it (nbagent's agent mark)."""
    mark = metadata.get("nbagent")
    return isinstance(mark, dict) and mark.get("kind") == "agent"


__all__ = ["MAX_TRANSCRIPT_BYTES", "MAX_UNPACKED_BYTES", "NotebookRecord", "executing_metadata",
           "in_kernel", "make_record", "not_this_cells", "read_record", "was_recorded"]
