"""``NbAgentKernel``: ipykernel's IPython kernel plus three things nbagent needs.

1. The ``nbagent`` extension is loaded at start (tolerant while it is missing or incomplete).
2. A shell-channel fast path. ipykernel 7.4 reads the shell socket on the "Shell channel" thread
   in :meth:`~ipykernel.kernelbase.Kernel.shell_channel_thread_main` and forwards each message to
   the main thread (or a subshell). This kernel overrides that method: for a ``comm_msg`` it peeks
   at the content and lets :func:`nbagent.notebook.waiting.handle_comm_msg` resolve a registered
   prompt button's decision right there (a dict lookup and a lock), then calls the base method so
   the message takes its normal route. So a prompt is answered even when the main thread is
   blocked by a synchronous wait, whatever route the front-end uses for widget comms.
3. Interrupt → clean abort: SIGINT first sets every registered abort
   (:func:`nbagent.notebook.aborts.trigger_aborts`, thread- and signal-safe), then does what
   ipykernel does (cancel the running async cell / raise ``KeyboardInterrupt`` in a sync one), so
   the agent stops cleanly and the cell still sees the interrupt. Once the cell's code is over, an
   interrupt only sets the aborts: ``KeyboardInterrupt`` in ipykernel's own reply code would lose
   the execute reply, and the front-end would show the cell running forever.
4. After the first ``kernel_info`` reply (every front-end sends one on connecting), a daemon thread
   imports what the first prompt needs (:mod:`nbagent.notebook.warmup`): the start does not wait
   for it, and neither does the first answer once the user has taken a moment to type.
"""

from __future__ import annotations

import asyncio
import signal
import threading
from contextlib import contextmanager
from types import FrameType
from typing import TYPE_CHECKING, Iterator

from ipykernel.ipkernel import IPythonKernel

from .. import __version__
from ..engine.contracts.json_types import JSONObject
from ..notebook import aborts, warmup
from ..notebook.fast_path import offer_to_fast_path

if TYPE_CHECKING:
    import zmq

EXTENSION = "nbagent"


class NbAgentKernel(IPythonKernel):
    """The IPython kernel with nbagent built in (kernelspec ``nbagent``)."""

    implementation = "nbagent"
    implementation_version = __version__

    @property
    def banner(self) -> str:  # type: ignore[override]
        """IPython's banner plus a line about nbagent."""
        base = self.shell.banner if self.shell is not None else ""
        return f"{base}nbagent {__version__}: run a prompt with %%agent; see %agent help.\n"

    _nbagent_fast_path = True  # the subclass's own step below: %load_ext installs none

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)
        self.extension_loaded = self._load_extension()

    # --- 1. the extension ---------------------------------------------------------------------

    def _load_extension(self) -> bool:
        shell = getattr(self, "shell", None)
        if shell is None:
            return False
        try:
            # Called directly rather than through the extension manager, so that a notebook's own
            # `%load_ext nbagent` (needed on other kernels) stays silent here instead of printing
            # "already loaded"; our loader is idempotent.
            import nbagent

            nbagent.load_ipython_extension(shell)
        except Exception:  # a broken extension must not keep the kernel from starting
            self.log.warning("nbagent kernel: loading the %s extension failed", EXTENSION, exc_info=True)
            return False
        return True

    async def kernel_info_request(self, *args: object, **kwargs: object) -> None:
        """ipykernel's reply, then the warm-up (once): started after the reply is sent, so the
        client's wait for a started kernel never shares the CPU with it."""
        await super().kernel_info_request(*args, **kwargs)
        if self.extension_loaded:
            warmup.start_once()

    async def do_execute(self, *args: object, **kwargs: object) -> JSONObject:
        """ipykernel's ``do_execute``, with the shell's last traceback reset first, and an interrupted
        cell always answered.

        ipykernel resets ``shell._last_traceback`` only in ``run_cell``, which an async cell (every
        ``%%agent`` cell) skips, and reads it for every failed cell. A first cell failing without a
        traceback (``%%agent --max-turns abc`` raises IPython's ``UsageError``) then crashed
        ``do_execute`` with ``AttributeError`` and the execute reply was never sent; a later one
        would have reported an earlier cell's traceback.

        An interrupt cancels the cell's task. When the cancel lands just before the task's last step
        (an aborted ``%%agent`` run finishing by itself, about 1 interrupt in 60), asyncio marks the
        finished task cancelled; ipykernel's ``await`` of it raises ``CancelledError``, which it does
        not catch, and neither the reply nor the idle status was sent: the cell ran forever in the
        front-end. That case is answered as the interrupt it is.
        """
        shell = self.shell
        if shell is not None:
            shell._last_traceback = None
            shell._last_traceback_during_displayhook = False
        try:
            return await super().do_execute(*args, **kwargs)
        except asyncio.CancelledError:
            cancelling = getattr(asyncio.current_task(), "cancelling", None)  # Python 3.11+
            if cancelling is None or cancelling():
                raise  # this handler itself is being cancelled (shutdown), or we cannot tell
            return self._interrupted_reply()
        finally:
            _too_late_to_interrupt()

    def _interrupted_reply(self) -> JSONObject:
        """The reply ipykernel gives a cell that raised ``KeyboardInterrupt`` (status ``error``, so
        Run All and nbclient stop)."""
        shell = self.shell
        reply: JSONObject = {
            "status": "error", "ename": "KeyboardInterrupt", "evalue": "", "traceback": [],
            "engine_info": {"engine_uuid": self.ident, "engine_id": self.int_id, "method": "execute"},
            "user_expressions": {}, "payload": [],
        }
        if shell is not None:
            reply["execution_count"] = shell.execution_count - 1
            reply["payload"] = shell.payload_manager.read_payload()
            shell.payload_manager.clear_payload()
        return reply

    # --- 2. the shell-channel fast path --------------------------------------------------------

    async def shell_channel_thread_main(self, msg: list[zmq.Message]) -> None:
        """Resolve registered widget clicks on the shell-channel thread, then route as usual."""
        try:
            offer_to_fast_path(self.session, msg)
        except Exception:  # never let the fast path lose a message
            self.log.debug("nbagent fast path failed", exc_info=True)
        await super().shell_channel_thread_main(msg)

    # --- 3. interrupt → abort ----------------------------------------------------------------------

    @contextmanager
    def _cancel_on_sigint(self, future: asyncio.Future[object]) -> Iterator[None]:
        """ipykernel's SIGINT-cancels-the-async-cell handler, with the aborts set first."""
        try:
            with super()._cancel_on_sigint(future):
                inner = signal.getsignal(signal.SIGINT)

                def handler(signum: int, frame: FrameType | None) -> None:
                    aborts.trigger_aborts()
                    if callable(inner):
                        inner(signum, frame)

                signal.signal(signal.SIGINT, handler)
                yield  # the base context restores the handler it saved
        finally:
            _too_late_to_interrupt()  # the cell is over; ipykernel still has to send its reply

    def pre_handler_hook(self) -> None:
        """For synchronous cells: set the aborts, then raise ``KeyboardInterrupt`` as usual."""
        super().pre_handler_hook()
        signal.signal(signal.SIGINT, _abort_then_interrupt)


def _abort_then_interrupt(signum: int, frame: FrameType | None) -> None:
    aborts.trigger_aborts()
    raise KeyboardInterrupt


def _abort_only(signum: int, frame: FrameType | None) -> None:
    aborts.trigger_aborts()


def _too_late_to_interrupt() -> None:
    """From the end of a cell's code until ``post_handler_hook`` restores the idle handler, an
    interrupt sets the aborts and raises nothing into ipykernel's reply code (which would log
    "KeyboardInterrupt caught in kernel" and never send the reply)."""
    if threading.current_thread() is threading.main_thread():  # signals: main thread only (not subshells)
        signal.signal(signal.SIGINT, _abort_only)


__all__ = ["NbAgentKernel"]
