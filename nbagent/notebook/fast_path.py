"""Widget clicks that act while the model's code blocks the kernel's main thread.

ipykernel 7 reads the shell channel on a thread of its own and routes each message to the main
shell (or a subshell). A widget's ``comm_msg`` goes where its comm last published from: for the
agent's widgets, the main shell, which is busy while the python tool runs synchronous code. So a
click on Allow, Deny or Stop would wait for that code to end. Here the shell-channel thread first
offers each ``comm_msg`` to :func:`nbagent.notebook.waiting.handle_comm_msg` (tiny, thread-safe:
it resolves a prompt's decision or runs Stop's action), and each ``comm_close`` to
:func:`~nbagent.notebook.waiting.handle_comm_close` (the bridge's wait for a hello ends when the
front-end refuses the comm), then routes it as usual.

The nbagent kernel does this in its subclass; ``%load_ext nbagent`` in a stock ipykernel installs
the same step on the running kernel with :func:`install_on_running_kernel`.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from . import waiting

if TYPE_CHECKING:
    import zmq
    from ipykernel.kernelbase import Kernel
    from jupyter_client.session import Session


def offer_to_fast_path(session: "Session | None", msg: "list[zmq.Message]") -> bool:
    """Peek at one raw shell message; ``True`` if a registered widget or comm acted on it."""
    if session is None:
        return False
    _idents, frames = session.feed_identities(msg, copy=False)
    # content=False only peeks: the signature is checked but not recorded, so the main thread's
    # full deserialize of the same message does not see a "duplicate signature".
    peek = session.deserialize(frames, content=False, copy=False)
    msg_type = peek["header"].get("msg_type")
    if msg_type not in ("comm_msg", "comm_close"):
        return False
    content = session.unpack(peek["content"])
    if msg_type == "comm_close":  # a front-end without the bridge's target refuses its comm at once
        return waiting.handle_comm_close(content.get("comm_id"))
    sender = peek["header"].get("session")
    return waiting.handle_comm_msg(content.get("comm_id"), content.get("data"),
                                   sender if isinstance(sender, str) else None)


def install_on_running_kernel(kernel: "Kernel | None" = None) -> bool:
    """Route the running ipykernel's shell messages through the fast path first; ``False`` (and
    nothing changed) when the kernel has no shell-channel thread or already has the step."""
    if kernel is None:
        from ipykernel.kernelbase import Kernel

        kernel = Kernel.instance() if Kernel.initialized() else None
    thread = getattr(kernel, "shell_channel_thread", None)
    stream = getattr(kernel, "shell_stream", None)
    route = getattr(kernel, "shell_channel_thread_main", None)
    if kernel is None or thread is None or stream is None or route is None or getattr(kernel, "_nbagent_fast_path", False):
        return False
    setattr(kernel, "_nbagent_fast_path", True)  # noqa: B010 - marked on the instance, as installed

    async def first_the_fast_path(msg: "list[zmq.Message]") -> None:
        try:
            offer_to_fast_path(kernel.session, msg)
        except Exception:  # never lose a message to the fast path
            kernel.log.debug("nbagent fast path failed", exc_info=True)
        await route(msg)

    installed = threading.Event()

    def swap() -> None:  # on the shell-channel thread, which owns the stream
        stream.on_recv(first_the_fast_path, copy=False)
        installed.set()

    thread.io_loop.add_callback(swap)
    return installed.wait(timeout=5)


__all__ = ["install_on_running_kernel", "offer_to_fast_path"]
