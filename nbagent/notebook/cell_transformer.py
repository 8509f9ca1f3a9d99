"""What IPython runs for an agent cell: the input transformer and the awaited calls it writes.

A cell magic cannot await, so this cleanup transformer rewrites a ``%%agent`` cell into
``await run_agent_cell(line, cell)`` (and ``%agent retry`` / ``fix`` into ``run_agent_command``);
IPython then runs it as a top-level-await cell, which lets widget clicks reach it on ipykernel 7.4.
The magics (:mod:`.magics`, seen through :class:`~.magics_api.MagicsApi`) do the rest.
"""

from __future__ import annotations

import asyncio
import re

from .magics_api import MagicsApi, active
from .outcome import AgentInterrupted
from .tool_code import transforming_tool_code

RUNNER = "__import__('nbagent.notebook.cell_transformer', fromlist=['_']).run_agent_cell"
COMMAND_RUNNER = "__import__('nbagent.notebook.cell_transformer', fromlist=['_']).run_agent_command"


def _active() -> MagicsApi | None:
    return active()


def _magics() -> MagicsApi:
    magics = active()
    if magics is None:
        raise RuntimeError("nbagent is not loaded: run %load_ext nbagent first.")
    return magics


async def run_agent_cell(line: str, cell: str) -> None:
    """What a ``%%agent`` cell becomes: run the prompt with live widgets (top-level await)."""
    try:
        await _magics().run_prompt(line, cell)
    except asyncio.CancelledError:
        # ipykernel turns ■ into a cancellation of the cell's task; the run has cleaned up on the
        # way out. End the cell like an interrupted one: one line, KeyboardInterrupt, no frames.
        raise AgentInterrupted() from None


async def run_agent_command(line: str) -> None:
    """What ``%agent retry`` and ``%agent fix`` become (they run the loop, so they must await too)."""
    command, _, options = line.strip().partition(" ")
    try:
        if command == "fix":
            await _magics().fix_async(options)
        else:
            await _magics().retry_async(options)
    except asyncio.CancelledError:
        raise AgentInterrupted() from None


_AGENT_CELL = re.compile(r"%%agent(\s|$)")


def agent_cell_transformer(lines: list[str]) -> list[str]:
    """Cleanup transformer: ``%%agent`` cells (and chat-mode cells) become awaited calls."""
    if not lines:
        return lines
    active = _active()
    if active is not None and not getattr(active.shell, "autoawait", True):
        return lines  # no top-level await: the real cell magic (the fallback path) runs instead
    first = lines[0].strip()
    if _AGENT_CELL.match(first) and not (first.endswith("?") and not "".join(lines[1:]).strip()):
        line = first[len("%%agent"):].strip()
        return [f"await {RUNNER}({line!r}, {''.join(lines[1:])!r})\n"]
    if first.startswith("%agent") and first[len("%agent"):].split()[:1] in (["retry"], ["fix"]) and len(lines) == 1:
        rest = first[len("%agent"):].strip()
        return [f"await {COMMAND_RUNNER}({rest!r})\n"]
    magics = active
    # Not while an agent runs: the python tool's code goes through transform_cell too.
    if magics is not None and magics.mode == "chat" and not magics.running and not transforming_tool_code():
        if first.startswith("%%python"):
            return lines[1:]
        text = "".join(lines)
        if text.strip() and not first.startswith(("%", "!")) and not _agents_code(text):
            return [f"await {RUNNER}('', {text!r})\n"]
    return lines


def _agents_code(text: str) -> bool:
    """Whether the cell being run is a code cell the agent made (its python call, or a cell it
    inserted), as its mark in the metadata JupyterLab and Notebook 7 send says: code, never a
    prompt, also in chat mode (Restart & Run All of a chat-mode notebook runs them as they ran).
    Still as the agent made it (a failed attempt's SyntaxError included), or edited into other
    Python; one the user typed a question over is a prompt, as any plain cell in chat mode."""
    import hashlib

    from .document.embedded import executing_metadata
    from .document.removal import MADE_KINDS

    mark = executing_metadata().get("nbagent")
    if not isinstance(mark, dict) or mark.get("kind") not in MADE_KINDS:
        return False
    made = mark.get("made")
    made_hash = made.get("source_sha256") if isinstance(made, dict) else None
    as_made = {hashlib.sha256(t.encode()).hexdigest() for t in (text, text.removesuffix("\n"))}
    if made_hash in as_made:
        return True
    return _is_python(text)


def _is_python(text: str) -> bool:
    """Whether ``text`` is code as IPython runs a cell: its magics, ``!`` commands and ``df?`` made
    Python by IPython's own transforms, top-level ``await`` allowed (a bare ``compile`` took such an
    agent-made cell for a question)."""
    import ast

    from IPython.core.inputtransformer2 import TransformerManager

    try:
        code = TransformerManager().transform_cell(text)
        compile(code, "<cell>", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True)
    except (SyntaxError, ValueError):
        return False
    return True


# IPython's check_complete skips transformers with side effects: without this, a console would
# take "%%agent" alone as a complete cell and submit it on the first Enter.
agent_cell_transformer.has_side_effects = True  # type: ignore[attr-defined]
