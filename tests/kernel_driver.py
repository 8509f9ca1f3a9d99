"""A small jupyter_client driver for real kernels: run cells, watch iopub, click widget buttons.

It clicks the way a front-end does: it finds a Button model's ``comm_open`` on iopub and sends
``comm_msg {"method": "custom", "content": {"event": "click"}}`` on the shell channel.
"""

from __future__ import annotations

import os
import queue
import sys
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable

from jupyter_client.manager import KernelManager

from nbagent.notebook.autorun import local_transport


@dataclass
class CellRun:
    """What one execute_request produced so far."""

    msg_id: str
    outputs: list[dict[str, Any]] = field(default_factory=list)
    reply: dict[str, Any] | None = None
    idle: bool = False

    @property
    def text(self) -> str:
        parts: list[str] = []
        last_stream = None
        for out in self.outputs:
            t = out.get("msg_type")
            c = out["content"]
            if t == "stream" and last_stream == c.get("name") and parts:
                # One print can reach us in several messages (the kernel flushes its stream on a timer,
                # between the print's writes on a loaded machine): joined as a front-end shows them, not
                # with a line break ("x\n 42" for print('x', 42) once failed a test).
                parts[-1] += c["text"]
                continue
            last_stream = c.get("name") if t == "stream" else None
            if t == "stream":
                parts.append(c["text"])
            elif t in ("display_data", "execute_result", "update_display_data"):
                parts.append(c["data"].get("text/plain", ""))
            elif t == "error":
                parts.append("\n".join(c.get("traceback", [])) or c.get("evalue", ""))
        return "\n".join(parts)

    @property
    def status(self) -> str | None:
        return self.reply["content"]["status"] if self.reply else None


class KernelDriver:
    """Start a kernel, execute code, and interact with widgets from outside, like a front-end."""

    refuse_targets: tuple[str, ...] = ()

    def __init__(self, kernel_name: str = "python3", env: dict[str, str] | None = None, cwd: str | None = None,
                 refuse_targets: tuple[str, ...] = (), widgets: bool = True) -> None:
        """``refuse_targets``: comm targets this front-end lacks; it closes their comms at once, as
        JupyterLab's kernel connection does for a target nobody registered. ``widgets``: it renders
        widgets, so it opens ipywidgets' control comm on connecting, as a widget manager does (False:
        a client that shows nothing, as nbclient)."""
        self.refuse_targets = refuse_targets
        self.km = local_transport(KernelManager(kernel_name=kernel_name))  # IPC: no TCP port, no warning
        full_env = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
        full_env.update(env or {})
        self.km.start_kernel(env=full_env, cwd=cwd)
        self.kc = self.km.client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=60)
        if widgets:
            # ipywidgets registers the control target when imported (a page loaded after that opens it).
            self.kc.execute_interactive("__import__('ipywidgets')", silent=True, timeout=60)
            self.kc.shell_channel.send(self.kc.session.msg(
                "comm_open", {"comm_id": uuid.uuid4().hex, "target_name": "jupyter.widget.control", "data": {}},
                metadata={"version": "1.0.0"}))
        self.runs: dict[str, CellRun] = {}
        self.comms: dict[str, dict[str, Any]] = {}  # comm_id -> widget state
        self.order: list[str] = []  # execute requests as sent
        self.finished: list[str] = []  # execute requests as their idle arrived (the order they ran in)
        self._subshell: str | None = None

    def close(self) -> None:
        try:
            self.kc.stop_channels()
        finally:
            self.km.shutdown_kernel(now=True)

    def execute(self, code: str, *, cell_id: str | None = None) -> CellRun:
        """Send ``code``; ``cell_id`` sends it as JupyterLab does (``metadata.cellId``), which
        jupyter_client's own ``execute`` cannot."""
        if cell_id is None:
            msg_id = self.kc.execute(code, allow_stdin=False)
        else:
            content = {"code": code, "silent": False, "store_history": True, "user_expressions": {},
                       "allow_stdin": False, "stop_on_error": True}
            msg = self.kc.session.msg("execute_request", content, metadata={"cellId": cell_id})
            self.kc.shell_channel.send(msg)
            msg_id = msg["header"]["msg_id"]
        run = CellRun(msg_id)
        self.runs[msg_id] = run
        self.order.append(msg_id)
        return run

    def pump(self, timeout: float = 0.05) -> None:
        """Read whatever iopub and shell messages have arrived."""
        while True:
            try:
                msg = self.kc.get_iopub_msg(timeout=timeout)
            except queue.Empty:
                break
            self._on_iopub(msg)
            timeout = 0.0
        while True:
            try:
                reply = self.kc.get_shell_msg(timeout=0)
            except queue.Empty:
                break
            parent = reply["parent_header"].get("msg_id")
            if parent in self.runs:
                self.runs[parent].reply = reply

    def _on_iopub(self, msg: dict[str, Any]) -> None:
        t = msg["msg_type"]
        c = msg["content"]
        if t == "comm_open":
            if c.get("target_name") in self.refuse_targets:
                self.kc.shell_channel.send(self.kc.session.msg("comm_close", {"comm_id": c["comm_id"], "data": {}}))
                return
            self.comms[c["comm_id"]] = dict(c.get("data", {}).get("state", {}))
            return
        if t == "comm_msg":
            data = c.get("data", {})
            if data.get("method") in ("update", "echo_update") and c["comm_id"] in self.comms:
                self.comms[c["comm_id"]].update(data.get("state", {}))
            return
        parent = msg["parent_header"].get("msg_id")
        run = self.runs.get(parent)
        if run is None:
            return
        if t == "status" and c.get("execution_state") == "idle":
            if not run.idle:
                self.finished.append(parent)
            run.idle = True
        elif t in ("stream", "display_data", "execute_result", "update_display_data", "error"):
            run.outputs.append(msg)

    def wait(self, cond: Callable[[], Any], timeout: float = 60.0, what: str = "condition") -> Any:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.pump()
            value = cond()
            if value:
                return value
        raise TimeoutError(f"timed out after {timeout} s waiting for {what}")

    def wait_done(self, run: CellRun, timeout: float = 60.0) -> CellRun:
        try:
            self.wait(lambda: run.idle and run.reply is not None, timeout, f"cell {run.msg_id} to finish")
        except TimeoutError as exc:  # what the cell showed so far says where it hung (a CI run cannot be re-run)
            raise TimeoutError(f"{exc}; it showed so far:\n{run.text[-3000:]}") from None
        return run

    def buttons(self, description: str) -> list[str]:
        """comm ids of Button models with this description, oldest first, not disabled."""
        return [cid for cid, st in self.comms.items()
                if st.get("_model_name") == "ButtonModel" and st.get("description") == description
                and not st.get("disabled")]

    def wait_button(self, description: str, timeout: float = 60.0) -> str:
        return self.wait(lambda: next(reversed(self.buttons(description)), None), timeout, f"button {description!r}")

    def click(self, comm_id: str, *, subshell: bool = False) -> None:
        """Click a button; with ``subshell`` on a kernel subshell, as JupyterLab 4.6 sends widget comms
        (the click is then handled while the main thread is busy)."""
        content = {"comm_id": comm_id, "data": {"method": "custom", "content": {"event": "click"}}}
        msg = self.kc.session.msg("comm_msg", content)
        if subshell:
            msg["header"]["subshell_id"] = self.subshell()
        self.kc.shell_channel.send(msg)

    def subshell(self) -> str:
        """The id of a subshell of this kernel (created on first use)."""
        if self._subshell is None:
            request = self.kc.session.msg("create_subshell_request", {})
            self.kc.control_channel.send(request)
            while True:
                reply = self.kc.get_control_msg(timeout=30)
                if reply["parent_header"].get("msg_id") == request["header"]["msg_id"]:
                    break
            self._subshell = reply["content"]["subshell_id"]
        return self._subshell

    def interrupt(self) -> None:
        self.km.interrupt_kernel()

    def is_alive(self) -> bool:
        return self.km.is_alive()


PYTHON = sys.executable
