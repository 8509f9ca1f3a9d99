"""What the magics' helper modules use of :class:`~nbagent.notebook.magics.AgentMagics`: :class:`MagicsApi`,
and which instance ``%load_ext nbagent`` made active.

:mod:`.new_session`, :mod:`.document.cell_run`, :mod:`.document.replayed` and :mod:`.cell_transformer` are
functions of the magics moved out of ``magics.py``; they take this protocol, so none of them imports the
magics that import them (no import circle). ``AgentMagics`` is the one implementation (mypy checks it
where the magics pass themselves). Settings are read-only properties here: they are traits there.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, Protocol

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell

    from ..engine.contracts.events import Done
    from .document.inputs import CellLog
    from .kernel_context.figures import DisplayedImages
    from .session import LastError, NotebookSession


class MagicsApi(Protocol):
    """The state, settings and methods of the active magics that its helper modules use."""

    current: NotebookSession | None
    mode: str
    running: int
    _session_count: int
    last_error: LastError
    displayed: DisplayedImages
    cell_log: CellLog

    @property
    def shell(self) -> InteractiveShell | None: ...

    @property
    def document(self) -> Any: ...

    # --- settings (traits of AgentMagics) --------------------------------------------------------
    @property
    def model(self) -> str: ...

    @property
    def provider(self) -> str: ...

    @property
    def max_requests(self) -> int: ...

    @property
    def max_budget(self) -> float | None: ...

    @property
    def max_session_budget(self) -> float | None: ...

    @property
    def prices(self) -> Mapping[str, object]: ...

    @property
    def context_window(self) -> int | None: ...

    @property
    def token_budget(self) -> int | None: ...

    @property
    def session_token_budget(self) -> int | None: ...

    @property
    def effort(self) -> str | None: ...

    @property
    def context(self) -> str: ...

    @property
    def notes(self) -> int: ...

    @property
    def kernel_context_tokens(self) -> int: ...

    @property
    def web_search(self) -> bool: ...

    @property
    def allow(self) -> list[str]: ...

    @property
    def insert_code(self) -> bool: ...

    @property
    def cells(self) -> bool: ...

    @property
    def replay_if_changed(self) -> str: ...

    @property
    def record(self) -> bool: ...

    @property
    def task_root(self) -> str | None: ...

    @property
    def shell_tool(self) -> bool: ...

    @property
    def mcp_json(self) -> bool: ...

    @property
    def tokens_per_second(self) -> float | None: ...

    @property
    def first_token_latency(self) -> float: ...

    @property
    def permission_mode(self) -> str: ...

    @property
    def endpoint(self) -> str | None: ...

    @property
    def endpoints(self) -> Mapping[str, object]: ...

    # --- what the magics do ------------------------------------------------------------------------
    def session(self) -> NotebookSession: ...

    def agent_cell(self, line: str, cell: str) -> None: ...

    def new_session(self, *, resume_from: str | Path | None = None, **changes: Any) -> NotebookSession: ...

    def new_view(self, sess: NotebookSession, *, session_cost: float | None = None,
                 provider: str | None = None, session_unpriced: int | None = None) -> Any: ...

    async def run_prompt(self, line: str, cell: str) -> Done | None: ...

    async def fix_async(self, options: str) -> Done | None: ...

    async def retry_async(self, line: str) -> None: ...


_ACTIVE: MagicsApi | None = None
"""Process-wide on purpose: IPython runs one shell per process, and the input transformer (a plain
function IPython calls) has no other way to find its magics."""


def active() -> MagicsApi | None:
    """The magics ``%load_ext nbagent`` registered, or None before (and after ``%unload_ext``)."""
    return _ACTIVE


def set_active(magics: MagicsApi | None) -> None:
    """Called by ``extension.load`` / ``unload`` only."""
    global _ACTIVE
    _ACTIVE = magics
