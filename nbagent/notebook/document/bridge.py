"""The kernel's end of the notebook bridge: change the live document in the front-end.

Why a comm to a small front-end extension (``nbagent-bridge``, prebuilt in the wheel): the agent
runs inside an executing ``%%agent`` cell, and only the front-end holds the live document. Writing
the ``.ipynb`` behind its back corrupts open notebooks and loses edits; the collaboration document
needs a server extension and a server URL with a token the kernel does not have. The comm is scoped
to the notebook that owns the kernel, and ``pip install nbagent`` is the whole install.

The protocol (docs/notebook-bridge.md): the kernel opens comm ``nbagent.bridge``; an extension
answers ``hello``; requests ``{"type": "request", "id", "op", ...}`` get one ``reply`` each. Where
nothing answers (VS Code, Colab, classic Notebook, nbclient) ``connected`` stays False and nothing
waits: a request then fails at once with :class:`BridgeUnavailable`.

A page that goes away (a browser reload, the notebook's tab closed and opened again) leaves the
comm with nobody listening, and the new page never saw its ``comm_open``. Every message a page
sends carries its kernel connection's ``session`` in its header, the hello and the execute request
alike: so an agent cell run from a session that has not said hello on the current comm reopens
the comm and waits (``HELLO_WAIT_S``) for that page's hello before any request (:meth:`Bridge.ensure`),
and a request that times out reopens the comm and is sent once more before the bridge gives up.

Every page showing the notebook handles the comm (two windows on one notebook, or a shared
collaborative document), so a request made while a cell runs is addressed to the page that runs it
(``client``: its session, :func:`address_cell`): another page neither applies it nor answers for it,
and the kernel takes a reply only from the page it addressed (an extension older than that field
answers every request; its other pages' replies are then dropped here). A page that did not say
hello on the current comm (it was reloaded) is addressed no more: the page showing the notebook now
answers, as when only one page ever does.

Replies arrive on the kernel's shell-channel thread (the fast path, :mod:`..waiting`) while the
agent cell still runs; the same message reaches the comm's own handler later, when the kernel is
idle, and is ignored then (each reply resolves its request once).
"""

from __future__ import annotations

import functools
import itertools
import threading
import time
import uuid
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Iterator, Mapping, Protocol, cast

from ...engine.contracts.errors import NbAgentError
from .. import waiting
from .bridge_types import BridgeRequest, BridgeResult, RequestArgs

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from ...engine.contracts.json_types import JSONObject

TARGET = "nbagent.bridge"
PROTOCOL_VERSION = 2
"""Version 2: ``delete`` checks each cell in the front-end (see :mod:`.removal`), ``find``."""
HELLO_WAIT_S = 2.0
"""How long the first agent cell of a page waits for a front-end that sent a cell id (JupyterLab,
Notebook 7, autorun) to say hello. A front-end without the extension closes the comm at once, which
ends the wait; only one that neither answers nor closes costs all of it, once per page. (0.5 s was
missed by a loaded machine's first agent cell, which then lost its cells to the fallback.)"""
REQUEST_TIMEOUT_S = 10.0

_PAGE: ContextVar[str | None] = ContextVar("nbagent_bridge_page", default=None)
"""The session of the page whose cell is running (set per cell by :func:`address_cell`); unset in
``%agent serve``'s calls, which no cell makes (they go to every page, as before)."""


class BridgeUnavailable(NbAgentError):
    """No front-end with the nbagent extension answers for this kernel."""

    def __init__(self, why: str = "") -> None:
        super().__init__(why or "No notebook front-end with the nbagent extension is connected to this kernel "
                                "(JupyterLab 4 or Notebook 7 with nbagent installed in the server's environment).")


class BridgeError(NbAgentError):
    """The front-end refused or failed a request (its message says why)."""


class CommChannel(Protocol):
    """What the bridge uses of its comm (``comm.base_comm.BaseComm``; a fake one in tests)."""

    @property
    def comm_id(self) -> str: ...

    def send(self, data: dict[str, object]) -> None: ...

    def close(self) -> None: ...


class Bridge:
    """One kernel's comm to the front-end (process-wide: one per kernel)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._pending: dict[int, tuple[waiting.Decision[Mapping[str, object]], str | None]] = {}
        """Request id → (its decision, the session of the page it was addressed to)."""
        self._hellos = threading.Condition()
        self._said_hello = False  # a front-end said hello (on this comm or an earlier one)
        self._hello_here = False  # ... on the current comm
        self._closed: set[str] = set()  # comms the front-end closed (no target there: no extension)
        self._clients: set[str] = set()
        """The sessions (one per page's kernel connection) that said hello on the current comm."""
        self._pages: set[str] = set()
        """Every session that said hello in this kernel, on any comm: the pages with the extension."""
        self._asked: set[str] = set()  # sessions a hello was awaited for: each waits once, at most
        self._comm: CommChannel | None = None
        self._failed = False  # a request timed out: the front-end went away; stop waiting on it
        self.frontend: str | None = None
        self.path: str | None = None
        self.version = 1
        """The protocol version the front-end's hello named (an older extension than the kernel's
        may be installed where JupyterLab runs)."""
        self.waited_s = 0.0
        """How long agent cells waited for a hello in all (bounded: HELLO_WAIT_S once per page)."""
        self.reopened = 0
        """How often the comm was reopened for a new page or after an unanswered request."""

    @property
    def connected(self) -> bool:
        """Whether a front-end with the extension said hello (and has not stopped answering)."""
        return self._said_hello and not self._failed

    @property
    def ever_connected(self) -> bool:
        """Whether a front-end with the extension said hello in this kernel at all."""
        return self._said_hello

    def page_here(self, client: str | None) -> bool:
        """Whether the page of kernel session ``client`` said hello on the current comm: still
        there, not reloaded (a reloaded page's new connection is a new session)."""
        with self._hellos:
            return client is not None and client in self._clients

    def runs_elsewhere(self, client: str | None) -> bool:
        """Whether kernel session ``client`` is no page with the extension while pages said hello
        with theirs: a console on the notebook's kernel (New Console for Notebook) sends its cells'
        ids too, but its cells are in no notebook, so what a page says of them means nothing."""
        with self._hellos:
            return client is not None and bool(self._pages) and client not in self._pages

    async def reconnect(self) -> bool:
        """Open a new comm and wait (``HELLO_WAIT_S`` at most, off the loop) for a page's hello:
        after a reload or a reopen, the page now showing the notebook never saw the old comm."""
        import asyncio

        return self._reopen() and await asyncio.to_thread(self._wait_hello, None, HELLO_WAIT_S)

    # --- opening ----------------------------------------------------------------------------
    def open(self) -> bool:
        """Open (or re-open) the comm; ``False`` where the process has no kernel to open it on.
        ``connected`` is unchanged: :meth:`ensure` and a retried request wait for the new comm's
        hello themselves, and ``%agent serve``'s reconnect probes the new comm."""
        try:
            from comm import create_comm
            from ipykernel.kernelbase import Kernel
        except ImportError:
            return False
        if not Kernel.initialized():
            return False
        old, self._comm = self._comm, None
        if old is not None:
            waiting.unregister_comm_handler(old.comm_id)
            old.close()
        with self._hellos:
            self._hello_here = False
            self._clients.clear()
        # Registered before the comm_open goes out: the front-end's answer (a hello, or a close) can
        # reach the fast path before create_comm returns. By id: self._comm is not the new comm yet.
        comm_id = uuid.uuid4().hex
        closed = functools.partial(self._on_closed, comm_id)
        waiting.register_comm_handler(comm_id, self._on_data, on_close=closed)
        try:
            comm = create_comm(target_name=TARGET, data={"version": PROTOCOL_VERSION}, comm_id=comm_id)
        except BaseException:
            waiting.unregister_comm_handler(comm_id)
            raise
        comm.on_msg(lambda msg: self._on_data(msg.get("content", {}).get("data") or {}, _session_of(msg)))
        comm.on_close(lambda _msg: closed())
        self._comm = comm
        self._failed = False
        return True

    def ensure(self, *, wait_s: float = 0.0, client: str | None = None) -> bool:
        """Be connected if a front-end can answer: open the comm if no hello came yet, then wait
        up to ``wait_s`` for it (the fast path delivers it while the cell runs).

        ``client``: the session of the page running the cell. A page that has not said hello on
        this comm (the page was reloaded, or the notebook reopened) gets a new comm and up to
        ``HELLO_WAIT_S`` for its hello, once per page; the old page's hello counts for nothing."""
        if self.connected and (client is None or not self._clients or client in self._clients
                               or client in self._asked):
            return True
        new_page = client is not None and client not in self._asked
        if client is not None:
            self._asked.add(client)
        if new_page and self.connected:
            self.reopened += 1
        if not self.open():
            return False
        wait_s = max(wait_s, HELLO_WAIT_S) if new_page else wait_s
        if wait_s <= 0:
            return self.connected
        if not self._wait_hello(client if new_page else None, wait_s) and not self._hello_here:
            self._failed = True  # nobody answers the new comm: an earlier page's hello counts for nothing
        return self.connected

    def _wait_hello(self, client: str | None, wait_s: float) -> bool:
        """Wait for a hello on the current comm (from ``client``'s page, when given); a front-end
        that closes the comm (it has no such target) ends the wait at once, unanswered."""
        def hello() -> bool:
            return client in self._clients if client is not None else self._hello_here

        started = time.monotonic()
        with self._hellos:
            self._hellos.wait_for(lambda: hello() or self._closed_here(), wait_s)
            answered = hello()
        self.waited_s += time.monotonic() - started
        return answered

    def _closed_here(self) -> bool:
        return self._comm is not None and self._comm.comm_id in self._closed

    def _on_closed(self, comm_id: str) -> None:
        """The front-end closed the comm ``comm_id`` (any thread): no hello will come on it."""
        with self._hellos:
            self._closed.add(comm_id)
            self._hellos.notify_all()

    def _on_data(self, data: Mapping[str, object], session: str | None = None) -> None:
        """A message from the front-end (any thread); ``session``: its sender's, when known."""
        match data:
            case {"type": "hello"}:
                self._on_hello(data, session)
            case {"type": "reply", "id": int() as reply_id}:
                with self._lock:
                    pending = self._pending.get(reply_id)
                    if pending is None or None not in (pending[1], session) and session != pending[1]:
                        return  # answered already, or by a page it was not addressed to
                    del self._pending[reply_id]
                pending[0].resolve(data)

    def _on_hello(self, data: Mapping[str, object], session: str | None) -> None:
        self.frontend = str(data.get("frontend") or "jupyterlab")
        self.path = str(data["path"]) if isinstance(data.get("path"), str) else None
        version = data.get("version")
        self.version = version if isinstance(version, int) else 1
        self._failed = False
        with self._hellos:
            if session:
                self._clients.add(session)
                self._pages.add(session)
            self._said_hello = self._hello_here = True
            self._hellos.notify_all()

    # --- requests ---------------------------------------------------------------------------
    def _send(self, op: str, args: RequestArgs) -> waiting.Decision[Mapping[str, object]]:
        if {"type", "id", "op", "client"} & args.keys():  # the envelope's keys: a cell is "cell_id", never "id"
            raise ValueError(f"bridge request arguments may not be named type, id, op or client: {sorted(args)}")
        if not self.connected or self._comm is None:
            raise BridgeUnavailable()
        request_id = next(self._ids)
        decision: waiting.Decision[Mapping[str, object]] = waiting.Decision()
        page = _PAGE.get()
        with self._hellos:
            if page not in self._clients:  # that page is gone (reloaded): whichever page shows the notebook now
                page = None
        with self._lock:
            self._pending[request_id] = (decision, page)
        message: BridgeRequest = {"type": "request", "id": request_id, "op": op, **args}
        if page is not None:
            message["client"] = page
        self._comm.send(dict(message))
        return decision

    @staticmethod
    def _result(op: str, reply: Mapping[str, object]) -> BridgeResult:
        if not reply.get("ok"):
            raise BridgeError(f"notebook {op} failed: {reply.get('error') or 'no reason given'}")
        result = reply.get("result")
        # The validating boundary: a dict result holds the keys BridgeResult names for ``op``
        # (ops.ts); the readers still check each value's type, as a front-end's answer is untrusted.
        return cast("BridgeResult", result) if isinstance(result, dict) else {}

    async def request(self, op: str, timeout: float = REQUEST_TIMEOUT_S, *, retry: bool = True,
                      **args: Unpack[RequestArgs]) -> BridgeResult:
        """Send one request and await its reply (interruptible). Unanswered within ``timeout``: the
        comm is reopened and, if a page says hello, the request is sent once more (``retry``);
        else ``BridgeUnavailable``."""
        import asyncio

        from ...engine.contracts.waits import within  # here, as asyncio: the kernel's start imports this module

        for attempt in (1, 2):
            decision = self._send(op, args)
            try:
                reply = await within(waiting.wait_for_decision(decision), timeout)
            except asyncio.TimeoutError:
                if attempt == 1 and retry and self._reopen() and await asyncio.to_thread(self._wait_hello, None, HELLO_WAIT_S):
                    continue
                self._failed = True
                raise BridgeUnavailable(f"the notebook front-end did not answer a {op} within {timeout:g} s") from None
            return self._result(op, reply)
        raise AssertionError("unreachable")  # pragma: no cover

    def request_sync(self, op: str, timeout: float = REQUEST_TIMEOUT_S, *, retry: bool = True,
                     **args: Unpack[RequestArgs]) -> BridgeResult:
        """The same from synchronous code on the kernel's main thread (a line magic)."""
        for attempt in (1, 2):
            decision = self._send(op, args)
            if decision.wait_sync(timeout):
                return self._result(op, decision.value)
            if not (attempt == 1 and retry and self._reopen() and self._wait_hello(None, HELLO_WAIT_S)):
                break
        self._failed = True
        raise BridgeUnavailable(f"the notebook front-end did not answer a {op} within {timeout:g} s")

    def _reopen(self) -> bool:
        """A request went unanswered: maybe its page is gone and another one listens (a reload
        this kernel did not see). Open a new comm (opened here, on the kernel's loop)."""
        if not self.open():
            return False
        self.reopened += 1
        return True


def _session_of(msg: object) -> str | None:
    """The session of the client that sent ``msg`` (its page's kernel connection)."""
    header = msg.get("header") if isinstance(msg, dict) else None
    session = header.get("session") if isinstance(header, dict) else None
    return session if isinstance(session, str) and session else None


_BRIDGE: Bridge | None = None


def bridge() -> Bridge:
    """The kernel's bridge (created on first use)."""
    global _BRIDGE
    if _BRIDGE is None:
        _BRIDGE = Bridge()
    return _BRIDGE


@contextmanager
def addressed_to(page: str | None) -> Iterator[None]:
    """Requests made inside go to ``page`` (a page's kernel session, :func:`executing_client`), as a
    cell's requests go to the page that runs it; to whichever page answers where that page never said
    hello on this connection (a closed page that did goes unanswered: the request times out)."""
    token = _PAGE.set(page)
    try:
        yield
    finally:
        _PAGE.reset(token)


def address_cell(*_: object) -> None:
    """A ``pre_run_cell`` hook: the bridge requests this cell makes go to the page that runs it."""
    _PAGE.set(executing_client())


def executing_request() -> JSONObject:
    """The shell request the kernel is executing (empty outside a kernel)."""
    try:
        from ipykernel.kernelbase import Kernel
    except ImportError:
        return {}
    if not Kernel.initialized():
        return {}
    try:
        parent = Kernel.instance().get_parent("shell")
    except Exception:  # an older signature or no parent yet
        return {}
    return parent if isinstance(parent, dict) else {}


def executing_client() -> str | None:
    """The session of the client whose request the kernel is executing: one per page's kernel
    connection (a reload or a reopened notebook makes a new one)."""
    return _session_of(executing_request())


def executing_cell_id() -> str | None:
    """The id of the cell the kernel is executing, as JupyterLab and Notebook 7 send it in the
    request's metadata (``cellId``); None under nbclient and other clients, which do not."""
    metadata = executing_request().get("metadata")
    cell_id = metadata.get("cellId") if isinstance(metadata, dict) else None
    return cell_id if isinstance(cell_id, str) and cell_id else None
