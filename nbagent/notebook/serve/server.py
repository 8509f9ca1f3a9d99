"""One notebook's MCP server: started by ``%agent serve``, stopped by ``--stop`` or the kernel's exit.

It owns the parts: the panel in the serve cell, the gate, the record, the clients, the HTTP server
on its thread, and the token file. The token is never printed into the notebook (outputs are saved
in the ``.ipynb`` and shared with it): it is written to a file only the user can read, in Jupyter's
runtime folder, and the lines to paste read it from there (``$(cat …)``). The file goes when the
server stops.
"""

from __future__ import annotations

import atexit
import json
import os
import re
import shlex
import time
from pathlib import Path
from typing import TYPE_CHECKING

from ...engine.contracts.config import DEFAULT_TOOL_OUTPUT_LIMIT
from ...engine.contracts.json_types import JSONObject
from ...engine.credentials.env_secrets import credential_env_values
from ...engine.loop.sanitize import Sanitizer, secret_values
from ..document.bridge import BridgeError, BridgeUnavailable, addressed_to, executing_cell_id, executing_client
from ..document.bridge_types import BridgeResult, OutputJSON
from .card import ServePanel
from .clients import Clients
from .gate import CallRefused, ServeGate
from .http import BearerGuard, HttpServer, new_token
from .kernel_loop import KernelLoop
from .operations import ALIVE_TIMEOUT_S, Operations
from .record import ActionLog

if TYPE_CHECKING:
    from ..magics_api import MagicsApi

#: Reads of the namespace's credential variables from the server's thread before one is let raise.
_SECRET_READ_TRIES = 3


def _runtime_dir() -> Path:
    from jupyter_core.paths import jupyter_runtime_dir

    path = Path(jupyter_runtime_dir())
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    return path


def shown_name(name: str) -> str:
    """The notebook's file name as the printed lines show it: a received notebook's name is not the
    user's, and a newline in it would add a line of its own to what is pasted into a terminal (a
    fake "Claude Code:" command), a terminal escape or a direction mark would hide or reorder text.
    Each character that is not printable is shown as ``?``."""
    return "".join(ch if ch.isprintable() else "?" for ch in name)


def write_token(token: str, port: int) -> Path:
    """The token in a new file readable by the user only (0600, created exclusively)."""
    path = _runtime_dir() / f"nbagent-serve-{os.getpid()}-{port}.token"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as file:
        file.write(token)
    return path


ASKS_HERE = "Every edit and run asks here first; %agent serve --stop ends it."
NO_ONE_TO_ASK = ("No notebook page with the nbagent extension answers this kernel (nbclient, VS Code, a console), "
                 "so no one can be asked here: edits and runs are refused until the notebook is open in JupyterLab "
                 "or Notebook 7; %agent serve --stop ends it.")
"""Said where the gate would refuse every call that asks: announcing that it asks would be untrue."""


class ServeServer:
    """The running server of one kernel (see :func:`start` in :mod:`.command`)."""

    def __init__(self, magics: MagicsApi, *, max_clients: int = 1) -> None:
        if magics.shell is None:  # only a bare AgentMagics() made outside IPython has none
            raise RuntimeError("%agent serve needs the IPython shell the magics were loaded into")
        self.magics, self.shell = magics, magics.shell
        self.kernel = KernelLoop.capture()
        self.panel = ServePanel()
        self.bridge = magics.document.bridge
        self.clients = Clients(max_clients)
        self.log = ActionLog(self._task_dir)
        gate = ServeGate(self.panel, self._mode, self._alive, _admin_allows, rules=self._user_rules,
                         redact=lambda: self._sanitizer().redact, hidden=self._panel_hidden)
        self.ops = Operations(self.bridge, gate, self.log, self.shell, redactor=lambda: self._sanitizer().redact,
                              context_tokens=self._context_tokens)
        self.gate = self.ops.gate
        self.started = time.time()
        self.notebook = shown_name(magics.document.notebook() or "this notebook")
        token = new_token()
        from .app import ToolCalls, build_server

        calls = ToolCalls(self.ops, self.clients, self.kernel, self._sanitizer, self._output_limit)
        mcp = build_server(calls, self.shell)
        self.http = HttpServer(BearerGuard(mcp.streamable_http_app(host="127.0.0.1"), token))
        self.http.start()
        try:
            self.token_file = write_token(token, self.http.port)
        except OSError:
            self.http.stop()  # no token file, no server: nothing would ever connect to it
            raise
        del token
        self.cell_id = executing_cell_id()  # where the panel is: written again there after a reopen
        self.page = executing_client()  # ... in the page that ran that cell
        self.cell_count = self._execution_count()  # ... while that cell is still the one that ran it
        self._panel_comm = getattr(self.bridge, "_comm", None)
        self._told_comm: object = None  # the connection already told to run the serve cell again
        atexit.register(self.stop)
        self.panel.set_status(f"serving {self.notebook} at {self.url} (token in {self.token_file})")

    @property
    def url(self) -> str:
        return self.http.url

    @property
    def running(self) -> bool:
        return self.http.running

    def _task_dir(self) -> Path | None:
        sess = self.magics.current
        folder = sess.agent.session.task_dir if sess is not None else None
        return Path(folder) if folder is not None else None

    def _mode(self) -> str:
        sess = self.magics.current
        return str(sess.agent.config.permission_mode if sess is not None else self.magics.permission_mode)

    async def _user_rules(self, tool: str, tool_input: JSONObject) -> str | None:
        """What the current session's ``deny`` list and ``pre_tool_use`` hook say of a client's call,
        as they would of its model's (kernel loop; no session: neither exists)."""
        from ...engine.contracts.hooks import ToolCall
        from ...engine.loop.user_rules import refused_by_user_rules

        sess = self.magics.current
        if sess is None:
            return None
        engine = sess.agent.engine
        call = ToolCall(tool_use_id=f"mcp-{tool}", name=tool, input=tool_input, read_only=tool == "notebook_read",
                        turn=engine.session.turn)
        return await refused_by_user_rules(call, engine.gate, engine.hooks)

    def _sanitizer(self) -> Sanitizer:
        """The secrets as nbagent's own model has them now (server thread, at each reply): the
        session's engine reads its ``secret_env`` and its secrets given in code (``api_key``, an
        endpoint's credentials) and makes its sanitizer again only when a value changed. It keeps
        that sanitizer as one tuple replaced whole, so asking from this thread while a request runs
        on the kernel's is safe (at worst both make the same one)."""
        from ..new_session import configured_secret_env

        sess = self.magics.current
        if sess is not None and sess.agent.engine.running_prompt is None:
            return sess.agent.engine.sanitizer()  # between runs it reads the notebook's variables itself
        # During a run the engine has them as the prompt began; with no session, no secret given in code.
        base = sess.agent.engine.sanitizer() if sess is not None else \
            Sanitizer(secret_values(configured_secret_env(self.magics), credential_env_values()))
        kernel = secret_values((), self._kernel_secrets())  # as the sanitizer keeps them (8 characters or more)
        if set(kernel) <= set(base.secrets):
            return base
        return Sanitizer(secret_values((), (*base.secrets, *kernel)))

    def _output_limit(self) -> int:
        """How much of a tool result nbagent's model gets (the session's ``tool_output_limit``)."""
        sess = self.magics.current
        return sess.agent.config.tool_output_limit if sess is not None else DEFAULT_TOOL_OUTPUT_LIMIT

    def _context_tokens(self) -> int:
        """The kernel context's budget a prompt of this notebook gets: the session's, or for the
        next session the ``%config AgentMagics.kernel_context_tokens`` setting."""
        sess = self.magics.current
        return sess.agent.config.kernel_context_tokens if sess is not None else self.magics.kernel_context_tokens

    def _kernel_secrets(self) -> tuple[str, ...]:
        """The namespace's credential variables (``db_password = "…"``), which nbagent's model gets
        ``[redacted]`` in every prompt's kernel context: a client's ``list_variables`` or
        ``notebook_read`` (asked of no one) must not show what the model is never shown. Read on
        the server's thread: a cell changing a mapping meanwhile makes the walk raise, so it is
        read again; a third failure raises (the reply is then refused, not sent unredacted)."""
        from ..kernel_context import KernelContext

        # With the kept outputs' secrets: a client's notebook_read shows a table as it was shown.
        # And the last error's traceback's quoted literals (a module's password="…"), as a run's redaction has.
        context = KernelContext(self.shell, getattr(self.magics, "last_error", None), getattr(self.magics, "displayed", None))
        for _ in range(_SECRET_READ_TRIES - 1):
            try:
                return context.secrets()
            except RuntimeError:  # "dictionary changed size during iteration"
                continue
        return context.secrets()

    async def _alive(self) -> bool:
        if not await self.ops.alive():
            return False
        await self._panel_shown()
        return True

    async def _panel_shown(self) -> None:
        """After the notebook was closed and opened again, its serve cell shows what was saved, not
        the panel, and outputs written through the bridge are never trusted (so a widget there is not
        drawn): a card would wait unseen. So a call is refused until the user runs the serve cell
        again (:meth:`show_panel_here`); once per connection the cell says so in one line."""
        comm = getattr(self.bridge, "_comm", None)  # a new comm: a new connection of the front-end
        if comm is self._panel_comm:
            return
        why = ("The notebook was opened again, so its %agent serve cell no longer shows the permission "
               "cards: not run. Run that cell again (the server and its token stay), then call again.")
        if self.cell_id is not None and comm is not self._told_comm and await self._still_serve_cell():
            notice = ("nbagent: the notebook was opened again: run this cell again to show the permission "
                      "cards of MCP clients here (the server and its token stay).\n")
            outputs: list[OutputJSON] = [
                {"output_type": "stream", "name": "stdout", "text": "\n".join(self.paste_lines()) + "\n"},
                {"output_type": "stream", "name": "stderr", "text": notice}]
            try:
                await self.bridge.request("replace", cell_id=self.cell_id, outputs=outputs)
                self._told_comm = comm
            except (BridgeError, BridgeUnavailable):
                pass
        raise CallRefused(why)

    async def _panel_hidden(self) -> str | None:
        """Why the serve cell does not show the panel now (kernel loop): the user cleared its output
        or hid it (collapsed, or under a collapsed heading), or deleted the cell. The widget lives on
        in the kernel, so a card added to it would wait unseen for the whole ``ASK_TIMEOUT_S``. Asked
        of the page (a ``find`` of that one cell: small whatever the notebook holds) before a card is
        added and while it waits; None when it is shown, or when that cannot be told (no cell id, no
        reply, a front-end too old to say)."""
        if self.cell_id is None or self.bridge.runs_elsewhere(self.page):
            return None  # run in a console on the notebook's kernel: no notebook page has that cell
        try:
            # Asked of the page that ran the serve cell: another window on the same notebook shows
            # that cell without the panel (a cell's outputs go to the page that ran it). Bounded as
            # the liveness check is: a slow page is no reason to reopen the connection.
            with addressed_to(self.page):
                found = await self.bridge.request("find", timeout=ALIVE_TIMEOUT_S, retry=False, cell_id=self.cell_id)
        except (BridgeError, BridgeUnavailable):
            return None  # the gate's check of the front-end says what a silent page means
        return panel_hidden(found, self.panel.widget.model_id)

    async def _still_serve_cell(self) -> bool:
        """Whether the cell the panel was shown in still is the ``%agent serve`` cell: its source
        runs the command and it was not run again since (its execution count, where the front-end
        keeps one). A cell the user rewrote and ran holds the user's outputs: nbagent does not write
        over them (the call is refused all the same)."""
        try:
            cells = (await self.bridge.request("read")).get("cells", [])
        except (BridgeError, BridgeUnavailable):
            return False
        cell = next((c for c in cells if isinstance(c, dict) and c.get("id") == self.cell_id), None)
        if cell is None:
            return False
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else str(source)
        count = cell.get("execution_count")
        return bool(_SERVE_LINE.search(source)) and (not isinstance(count, int) or count == self.cell_count)

    def _execution_count(self) -> int | None:
        count = getattr(self.shell, "execution_count", None)  # the running cell's number, as the front-end shows it
        return count if isinstance(count, int) else None

    def show_panel_here(self) -> None:
        """``%agent serve`` run again while serving: the panel is displayed by the running cell, for
        the front-end connected now (the server, its port and its token stay)."""
        self.cell_id = executing_cell_id()
        self.page = executing_client()
        self.cell_count = self._execution_count()
        self._panel_comm = getattr(self.bridge, "_comm", None)

    def paste_lines(self) -> list[str]:
        """What the user pastes into a client; the token is read from its file, never shown."""
        name = "nbagent-" + "".join(ch if ch.isalnum() else "-" for ch in Path(self.notebook).stem)[:40]
        header = f"Authorization: Bearer $(cat {shlex.quote(str(self.token_file))})"
        vscode = {"servers": {name: {"type": "http", "url": self.url,
                                     "headers": {"Authorization": "Bearer ${input:" + name + "-token}"}}},
                  "inputs": [{"type": "promptString", "id": f"{name}-token", "password": True,
                              "description": f"nbagent token (cat {self.token_file})"}]}
        return [f"nbagent: MCP server for {self.notebook} at {self.url}; the token is in {self.token_file} "
                "(readable by you only; it ends with the server).",
                f"Claude Code:  claude mcp add --transport http {name} {self.url} --header \"{header}\"",
                f"VS Code (.vscode/mcp.json; Cursor: the same under mcpServers):  {json.dumps(vscode)}",
                ASKS_HERE if getattr(getattr(self, "bridge", None), "connected", False) else NO_ONE_TO_ASK]

    def status_line(self) -> str:
        clients = self.clients.connected()
        now = time.monotonic()
        who = ", ".join(f"{c.name} ({c.calls} call(s), last {now - c.last_seen:.0f} s ago)" for c in clients)
        always = self.gate.always()
        return (f"{self.url} for {self.notebook}; up to {self.clients.max_clients} client(s); connected: "
                f"{who or 'none'}" + (f"; allowed always: {', '.join(always)}" if always else ""))

    def stop(self) -> None:
        """Stop serving (idempotent): the HTTP server, the token file, the panel's cards."""
        atexit.unregister(self.stop)
        waiting = self.gate.stop()  # first: a call waiting for a click is refused, not left to hang or allowed
        # A waiting call ends on the kernel's loop once this cell is done: joining uvicorn (which
        # waits for it) until then would only stall the cell; its thread ends right after.
        self.http.stop(timeout=0.5 if waiting else 5.0)
        try:
            self.token_file.unlink()
        except FileNotFoundError:
            pass
        self.log.close()
        try:
            self.panel.close(f"stopped serving {self.notebook}")
        except Exception:  # at interpreter exit the widgets' comms may be gone already
            pass


_SERVE_LINE = re.compile(r"^\s*%agent\s+serve\b", re.MULTILINE)


def panel_hidden(found: BridgeResult, model_id: str) -> str | None:
    """Why a ``find`` reply for the serve cell says the panel (widget ``model_id``) is not seen."""
    index = found.get("index")
    if isinstance(index, int) and index < 0:
        return "The %agent serve cell was deleted"
    if found.get("in_collapsed_section") is True:
        return "The %agent serve cell is in a collapsed section (a heading above it is collapsed)"
    if found.get("outputs_hidden") is True:
        return "The %agent serve cell's output is hidden (collapsed)"  # JupyterLab draws no card there
    widgets = found.get("widgets")
    if isinstance(widgets, list) and model_id not in widgets:
        return "The %agent serve cell's output was cleared (or replaced)"
    return None


def _admin_allows(tool: str) -> bool:
    from ...admin.policy import AdminPolicyError, admin_policy

    try:
        policy = admin_policy()
    except AdminPolicyError:
        return False  # a broken admin file locks everything rather than nothing
    return policy is None or policy.tool_allowed(tool)
