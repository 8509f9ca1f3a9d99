"""The kernel reads "busy" in the front-end for as long as an agent cell runs, a wait for Allow included.

Measured in JupyterLab 4.6 with ipykernel 7.4 (tests/kernel/test_busy_status.py, and in the browser):
while a ``%%agent`` cell waits for a click, the page sends ``create_subshell_request`` on the
control channel (the widget manager's subshell) and ``comm_msg`` on that subshell. ipykernel
publishes ``status: busy`` then ``status: idle`` for each, parented to that request; JupyterLab's
kernel status (the status bar, the toolbar's circle) is the state of the latest status message
whose parent is not of a type the server leaves untracked (``comm_info``, ``kernel_info``,
``debug`` …, ``MappingKernelManager.untracked_message_types``). So it read "Idle" while the cell
still ran and the prompt waited.

The kernel can say better: while an agent cell runs, every ``idle`` it publishes for another
request is followed at once by ``busy`` parented to the running cell's ``execute_request``. The
protocol's busy/idle pairs of the other requests are untouched (their front-end futures still
end), and the cell's own ``idle`` at its end is the last word. Installed on the running kernel by
the first agent cell (stock ipykernel after ``%load_ext nbagent`` and the nbagent kernel alike).
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from ipykernel.kernelbase import Kernel

_lock = threading.Lock()
_running: list[dict[str, object]] = []  # the execute_request headers of the agent cells running, innermost last


def _kernel() -> "Kernel | None":
    try:
        from ipykernel.kernelbase import Kernel
    except ImportError:
        return None
    return Kernel.instance() if Kernel.initialized() else None


def _msg_id(parent: object) -> object:
    return (parent or {}).get("header", {}).get("msg_id") if isinstance(parent, dict) else None


def install(kernel: "Kernel") -> bool:
    """Wrap ``kernel._publish_status`` (once) so an idle for another request while an agent cell
    runs is followed by busy for the cell; ``False`` where the kernel has no such method."""
    if getattr(kernel, "_nbagent_busy", False):
        return True
    original: Callable[[str, str, object], object] | None = getattr(kernel, "_publish_status", None)
    if original is None:
        return False

    def publish_status(status: str, channel: str, parent: object = None) -> None:
        if status != "idle":
            original(status, channel, parent)
            return
        ended = parent if parent is not None else kernel.get_parent(channel)
        # The idle and its busy under the lock BusyHold.stop() takes: another thread's pair never
        # lands between the two, and a cell whose hold has ended (its own idle follows) never gets
        # a busy from a thread that read it as running just before.
        with _lock:
            original(status, channel, parent)
            running = _running[-1] if _running else None
            if running is not None and _msg_id(ended) != _msg_id(running):
                original("busy", "shell", running)

    # Patched on the instance (not a method of ours: ipykernel's Kernel has no hook for it).
    setattr(kernel, "_publish_status", publish_status)  # noqa: B010
    setattr(kernel, "_nbagent_busy", True)  # noqa: B010
    return True


class BusyHold:
    """Held around an agent cell (``start()`` … ``stop()``, or ``with BusyHold():``), on the thread
    that runs the cell, where the kernel's shell parent is its ``execute_request``; starting says
    "busy" once more for the cell. Nothing happens outside a kernel."""

    def __init__(self) -> None:
        self.parent: dict[str, object] | None = None

    def start(self) -> "BusyHold":
        kernel = _kernel()
        if kernel is None or self.parent is not None:
            return self
        try:
            parent = kernel.get_parent("shell")
        except Exception:  # an ipykernel without per-channel parents: nothing to hold
            return self
        if _msg_id(parent) is None or not install(kernel):
            return self
        self.parent = parent
        with _lock:
            _running.append(parent)
        # An idle published before the hold (the page makes its widget subshell as the cell's
        # first output appears) is answered now.
        kernel._publish_status("busy", "shell", parent)
        return self

    def stop(self) -> None:
        if self.parent is None:
            return
        with _lock:
            for i in range(len(_running) - 1, -1, -1):
                if _running[i] is self.parent:
                    del _running[i]
                    break
        self.parent = None

    def __enter__(self) -> "BusyHold":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


__all__ = ["BusyHold", "install"]
