"""The notes file: notes the agent keeps outside the context window (the memory-tool pattern).

With the ``notes`` setting (a bound in characters; 0, the default, is off) the model gets a
``notes`` tool that views, replaces or appends to ``notes.md`` in the task folder (in memory for a
session without one), and every turn's prompt carries the file as it stands, so what the agent
chose to keep survives masking, truncation and summaries, which only touch the conversation.

Off by default: what it is worth depends on what a model chooses to note, which an offline replay
cannot measure, while its cost is certain (the tool's definition in every request, the notes in
every prompt). The file is bounded: a write that would pass the bound is refused whole, with the
sizes, so the agent shortens its notes instead of losing their end.

A rollback undoes the notes with the rest of the session: each turn's mark (``turn_marks.json``)
keeps the notes as the turn began (only when they changed since the last mark that kept them), and
:func:`~.rollback.rollback` writes back, atomically and before anything else changes, the notes as
they stood before the rolled-back turns ran, also in a session resumed from its folder. Only a
turn whose process was killed before its end leaves no mark, so a rollback past it keeps the file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import pydantic

from ..contracts.errors import NbAgentError
from ..contracts.json_types import JSONObject
from ..contracts.messages import ContentBlock, TextBlockParam
from ..contracts.tool_api import Tool, ToolContext, ToolOutput
from ..disk.persist import atomic_write_text
from ..disk.safe_open import read_regular
from ..state.session import Session
from ..state.store import NOTES_FILE

NOTES_TOOL = "notes"
NOTES_HEADER = (f"[Your notes ({NOTES_FILE}, kept across turns and never cleared from the context; "
                f"change them with the {NOTES_TOOL} tool):]")


class NotesFile:
    """The notes, on disk in ``folder`` (atomic writes) or in memory when ``folder`` is None."""

    def __init__(self, folder: Path | None) -> None:
        self.path = folder / NOTES_FILE if folder is not None else None
        self._memory = ""

    def read(self) -> str:
        """The notes as they stand ('' when there are none)."""
        if self.path is None:
            return self._memory
        data = read_regular(self.path)
        return data.decode("utf-8", errors="replace") if data is not None else ""

    def write(self, text: str) -> None:
        """Replace the notes."""
        if self.path is None:
            self._memory = text
        else:
            atomic_write_text(self.path, text)


class NotesInput(pydantic.BaseModel):
    """The ``notes`` tool's input."""

    model_config = pydantic.ConfigDict(extra="forbid")
    command: Literal["view", "write", "append"] = pydantic.Field(
        description="view: show the notes; write: replace them with text; append: add text at the end.")
    text: str = pydantic.Field(default="", description="The text to write or append (unused by view).")


class NotesTool(Tool):
    """The ``notes`` tool (read-only for permissions, like ``final_answer``: it writes nothing of the
    user's, only its own bounded file in the task folder, so it never asks)."""

    name = NOTES_TOOL
    description = ("Your notes file, kept outside the conversation: old tool results may be cleared from the "
                   "context, these notes are not, and each turn starts with them. Keep the facts you will need "
                   "later here (bounded: each save says how much room is left; write replaces, append adds).")
    read_only = True
    Input = NotesInput

    def __init__(self, notes: NotesFile, limit: int) -> None:
        self.notes, self.limit = notes, limit

    async def run(self, tool_input: JSONObject, ctx: ToolContext) -> ToolOutput:
        command, text = tool_input["command"], str(tool_input.get("text", ""))
        current = self.notes.read()
        if command == "view":
            return ToolOutput(content=current or "(no notes yet)")
        new = text if command == "write" else current + ("\n" if current and text else "") + text
        if len(new) > self.limit:
            return ToolOutput(is_error=True, content=(
                f"Not saved: the notes would be {len(new):,} characters and the bound is {self.limit:,}. "
                f"They hold {len(current):,} now; write a shorter version (write replaces them all)."))
        self.notes.write(new)
        return ToolOutput(content=f"Notes saved ({len(new):,} of {self.limit:,} characters).")


class NotesNotRestoredError(NbAgentError):
    """A rollback could not write the notes file back; nothing was rolled back."""

    def __init__(self, path: Path | None, exc: OSError) -> None:
        super().__init__(f"Not rolled back: the notes file {path} could not be restored ({exc}). Nothing changed; "
                         "make the task folder writable and roll back again.")


class SessionNotes:
    """A session's notes, made on first use once the setting is on (in its task folder, or in memory)."""

    def __init__(self, session: Session) -> None:
        self._session = session
        self._file: NotesFile | None = None
        self._tool: NotesTool | None = None  # one object while the bound stays: its definition is built once

    def file(self, limit: int) -> NotesFile | None:
        """The notes file, or None while the setting (``limit``) is 0."""
        if not limit:
            return None
        if self._file is None:
            self._file = NotesFile(self._session.task_dir)
        return self._file

    def current(self) -> str | None:
        """The notes as they stand, whatever the setting now (None: this session has none: never
        on, and no ``notes.md`` in its folder). What a turn's mark keeps for rollback."""
        if self._file is None:
            folder = self._session.task_dir
            if folder is None or read_regular(folder / NOTES_FILE) is None:
                return None
            self._file = NotesFile(folder)
        return self._file.read()

    def restore(self, text: str) -> None:
        """Write the notes back as ``text`` (a rollback); :class:`NotesNotRestoredError` if that fails."""
        if self._file is None:
            self._file = NotesFile(self._session.task_dir)
        if self._file.read() == text:
            return
        try:
            self._file.write(text)
        except OSError as exc:
            raise NotesNotRestoredError(self._file.path, exc) from None

    def tool(self, limit: int) -> NotesTool | None:
        """The ``notes`` tool to offer (None while off)."""
        notes = self.file(limit)
        if notes is None:
            return None
        if self._tool is None or self._tool.notes is not notes or self._tool.limit != limit:
            self._tool = NotesTool(notes, limit)
        return self._tool


def notes_blocks(text: str | None, limit: int) -> list[ContentBlock]:
    """The notes (``text``, as read at the turn's start) for a new prompt: none when off or empty,
    cut to ``limit`` characters should the file have grown past it outside the tool."""
    text = text if text is not None and limit > 0 else ""
    if len(text) > limit:
        text = text[:limit] + f"\n[… the notes file is longer than its bound of {limit:,} characters; the rest is not shown]"
    return [TextBlockParam(type="text", text=f"{NOTES_HEADER}\n{text}")] if text.strip() else []


__all__ = ["NOTES_FILE", "NOTES_HEADER", "NOTES_TOOL", "NotesFile", "NotesInput", "NotesNotRestoredError", "NotesTool",
           "SessionNotes", "notes_blocks"]
