"""Which text each cell ran (:class:`CellLog`), and the recent cells the model is told about: the
cells a turn's answer had in context, named by their first line where a replay finds them changed."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Callable, cast

from .fingerprint import fingerprint

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell

CONTEXT_CELLS = 5
"""How many recent cells the model is told about (the engine's ``MAX_INPUTS``)."""


def is_agent_cell(source: str) -> bool:
    """Whether ``source`` asks the agent (a ``%%agent`` cell, or code running one)."""
    return "%%agent" in source or "run_agent_cell" in source or "run_agent_command" in source


def settings_only(source: str) -> bool:
    """A cell of line magics and comments only (``%load_ext``, ``%config``): it sets the kernel up
    and holds no data, so its text changing (a replay policy set for CI) is no changed input."""
    return all(line.lstrip().startswith(("%", "#")) for line in source.splitlines() if line.strip())


def papermill_parameters(source: str) -> list[str] | None:
    """The names a cell papermill injected binds (``# Parameters`` then ``name = literal`` lines);
    None for any other cell. Its values are compared by variable, by content (``-p day 2024-02-01``
    as much as ``-p n 19``), so its text is no input: compared as a cell, a run without ``-p`` (the
    same defaults), or with the same values in another order, flagged it as changed."""
    first, _, rest = source.strip().partition("\n")
    if first.strip() != "# Parameters" or len(rest) > 100_000:
        return None
    try:
        body = ast.parse(rest).body
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    if not all(isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name)
               and _literal(s.value) for s in body):
        return None
    return [cast(ast.Name, cast(ast.Assign, s).targets[0]).id for s in body]


_NOT_FINITE = frozenset({"nan", "inf", "-inf"})


class _NotFinite(ast.NodeTransformer):
    """papermill writes a float that is not finite as ``float('nan')`` (``-p x nan``): read as the
    literal it stands for, not as code (which made the whole injected cell a context cell)."""

    def visit_Call(self, node: ast.Call) -> ast.AST:
        if (isinstance(node.func, ast.Name) and node.func.id == "float" and not node.keywords
                and len(node.args) == 1 and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str) and node.args[0].value.lower() in _NOT_FINITE):
            return ast.Constant(0.0)
        return node


def _literal(node: ast.expr) -> bool:
    try:
        ast.literal_eval(_NotFinite().visit(node))
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):  # a call, a name: code
        return False
    return True


def cell_key(source: str) -> str:
    return fingerprint(source.strip()) or ""


class CellLog:
    """Which cell (by the id JupyterLab and Notebook 7 send) ran which text, so that a cell run
    again with new text replaces its earlier text among the cells in context. One per shell."""

    def __init__(self, shell: InteractiveShell | None) -> None:
        self.latest: dict[str, str] = {}  # cell id -> its latest text
        self.ids: dict[str, str] = {}  # a text's fingerprint -> the cell that last ran it
        self.superseded: set[str] = set()  # texts a cell ran before it was edited and run again
        self.agent_texts: dict[str, str] = {}  # cell id -> the text nbagent's notebook tools last gave it
        events = getattr(shell, "events", None)
        if events is not None:
            events.register("post_run_cell", self._after_cell)

    def _after_cell(self, result: object) -> None:
        info = getattr(result, "info", None)
        cell_id, text = getattr(info, "cell_id", None), getattr(info, "raw_cell", None)
        if isinstance(cell_id, str) and isinstance(text, str):
            self.ran(cell_id, text)

    def ran(self, cell_id: str, text: str) -> None:
        """Cell ``cell_id`` ran ``text``: by the user (a ``post_run_cell``), or by the agent's
        ``notebook_run``, which no hook sees (its earlier text is no longer the cell's)."""
        before = self.latest.get(cell_id)
        if before is not None and before.strip() != text.strip():
            self.superseded.add(before.strip())
        self.latest[cell_id] = text
        self.ids[cell_key(text)] = cell_id
        self.superseded.discard(text.strip())

    def agent_ran(self, cell_id: str, text: str) -> None:
        """The agent's ``notebook_run`` ran ``text`` in cell ``cell_id``."""
        self.ran(cell_id, text)
        self.agent_texts[cell_id] = text

    def agent_edited(self, cell_id: str, text: str) -> None:
        """The agent's ``notebook_edit`` gave cell ``cell_id`` the text ``text`` (not run yet)."""
        self.agent_texts[cell_id] = text


def ran_inputs(shell: InteractiveShell) -> list[str]:
    """The cells run in this kernel so far, as typed (IPython's raw history)."""
    raw = getattr(getattr(shell, "history_manager", None), "input_hist_raw", None)
    return [s for s in (raw if raw is not None else shell.user_ns.get("In", [])) if isinstance(s, str)]


def context_cells(shell: InteractiveShell, log: CellLog | None,
                  redact: Callable[[str], str] | None = None) -> dict[str, str]:
    """The recent cells the model is told about (not agent cells; not a cell's superseded text),
    each by its first line: the name a replay gives it when it changed. Line and digest are saved
    in the task folder and the notebook's record, so a cell in which ``redact`` finds a secret is
    left out (not compared at a replay): its first line cut to 60 characters kept the start of a
    key (``key = "sk-ant-…"``), and its unsalted digest would let whoever receives the notebook
    check guesses of a password set in a one-line cell."""
    superseded = log.superseded if log is not None else set()
    recent = [s for s in ran_inputs(shell)[-CONTEXT_CELLS - 1:] if s.strip() and not is_agent_cell(s)]
    cells = [s for s in recent if s.strip() not in superseded and not settings_only(s)
             and papermill_parameters(s) is None][-CONTEXT_CELLS:]
    if redact is not None:  # its key, the cell's digest, would let a short password be guessed offline
        cells = [s for s in cells if redact(s) == s]
    return {cell_key(s): s.strip().splitlines()[0][:60] for s in cells}


def parameter_names(shell: InteractiveShell) -> list[str]:
    """The names papermill's injected cell among the recent cells bound (see :func:`papermill_parameters`)."""
    recent = [s for s in ran_inputs(shell)[-CONTEXT_CELLS - 1:] if s.strip() and not is_agent_cell(s)]
    return [name for s in recent for name in papermill_parameters(s) or []]


__all__ = ["CONTEXT_CELLS", "CellLog", "cell_key", "context_cells", "is_agent_cell", "papermill_parameters",
           "parameter_names", "ran_inputs", "settings_only"]
