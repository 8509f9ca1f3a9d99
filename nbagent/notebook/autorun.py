"""Run notebooks with ``%%agent`` cells unattended: an nbclient client that answers prompts.

``AutoClickClient`` watches the widget models the kernel opens; when a prompt button it is told
to press appears (``Allow`` by default), it sends the same click a browser would send
(``comm_msg`` ``{"method": "custom", "content": {"event": "click"}}`` on the shell channel). It is
also the notebook bridge's front-end (:mod:`.document.nbformat_frontend`): it sends each cell's id
as JupyterLab does, so the agent's code becomes cells below the agent cell and the notebook tools
work, on the notebook being executed.
``python -m nbagent.notebook.autorun IN.ipynb OUT.ipynb [--html OUT.html]`` runs one notebook.

nbclient, nbformat and nbconvert are the optional ``notebooks`` extra (``pip install
'nbagent[notebooks]'``): they are imported on first use, so importing this module needs none of them.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import os
import sys
import uuid
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from jupyter_client.client import KernelClient
    from jupyter_client.manager import KernelManager
    from nbclient import NotebookClient
    from nbformat import NotebookNode

    from .document.nbformat_frontend import NotebookDocument

    AutoClickClient: type[NotebookClient]  # made by client_class() on first use

INSTALL_HINT = "pip install 'nbagent[notebooks]'"


def _need(module: str) -> ModuleType:
    """Import an optional package of the ``notebooks`` extra, or say how to install it."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(f"running notebooks unattended needs {module.split('.')[0]}: {INSTALL_HINT}") from exc


def local_transport(km: "KernelManager") -> "KernelManager":
    """``km`` (a jupyter_client kernel manager not started yet) set to talk to its kernel over
    local IPC sockets in Jupyter's runtime folder instead of TCP on localhost: a kernel nbagent
    starts itself then has no network port, and ipykernel has no reason to warn that it is
    "running over TCP without encryption". The sockets go when the kernel is shut down. On
    Windows, which has no IPC sockets for ZeroMQ, it stays on TCP, and so it does where the runtime
    folder's path is too long for a socket's address (:data:`IPC_PATH_MAX`)."""
    if os.name == "nt":
        return km
    from jupyter_core.paths import jupyter_runtime_dir

    runtime = jupyter_runtime_dir()
    path = os.path.join(runtime, f"nbagent-kernel-{uuid.uuid4().hex[:12]}")
    if len(os.fsencode(path)) + len("-99") > IPC_PATH_MAX:  # each channel's socket is path-1 … path-5
        return km  # the kernel would not start ("File name too long"): TCP, warning and all
    os.makedirs(runtime, mode=0o700, exist_ok=True)
    km.transport = "ipc"
    km.ip = path
    return km


IPC_PATH_MAX = 103
"""The longest address of an IPC socket (``sun_path``: 108 bytes on Linux, 104 on macOS, with its
NUL): a deep ``JUPYTER_RUNTIME_DIR`` (a test runner's temporary folders) made the runner's kernel
fail to start."""


@functools.cache
def client_class() -> "type[NotebookClient]":
    """:class:`AutoClickClient`, built on first use (nbclient is an optional dependency)."""
    _need("nbclient")
    from nbclient import NotebookClient
    from nbclient.util import run_sync
    from traitlets import List, Unicode

    from .document.bridge import TARGET
    from .document.nbformat_frontend import NotebookDocument

    class AutoClickClient(NotebookClient):
        """A NotebookClient that clicks every enabled button whose label is in ``click``.

        A cell can choose its own answers with metadata ``{"nbagent": {"click": ["Deny"]}}`` (an
        empty list clicks nothing), so a notebook can show a denial or *Retry now* unattended.
        """

        click = List(Unicode(), default_value=["Allow", CANCEL_FAILED],
                     help="Button descriptions (or tooltips) to press, by preference.").tag(config=True)
        notebook_path = Unicode("", help="The notebook's path, as the bridge's hello names it.").tag(config=True)

        def __init__(self, nb: "NotebookNode", **kwargs: Any) -> None:  # nbclient's own traits
            super().__init__(nb, **kwargs)
            self.clicked: list[str] = []
            self._models: dict[str, dict[str, object]] = {}
            self.queued_clicks: dict[int, list[str]] = {}
            """Each queued cell's buttons (by ``id(cell)``), read when the run queued it: a model's
            ``notebook_edit`` of a cell below replaces its ``nbagent`` metadata, click list included."""
            self.document = NotebookDocument(nb.cells, self.notebook_path, _need("nbformat").from_dict)
            self.comm_open_handlers[TARGET] = self._open_bridge

        # Jupyter messages are nbclient's dict[str, Any]: JSON off the wire, read by key.
        def _open_bridge(self, msg: dict[str, Any]) -> _BridgeComm:
            return _bridge_comm(self, self.document, msg["content"]["comm_id"])

        async def async_execute(self, reset_kc: bool = False, **kwargs: object) -> "NotebookNode":
            """nbclient's run, over the cells there at the start (the agent's new cells are not run
            again), each sent with its cell id."""
            self.queued_clicks = {id(c): cell_clicks(c.get("metadata"), list(self.click)) for c in self.nb.cells}
            return await _run_queued_cells(self, self.document, reset_kc, kwargs)

        execute = run_sync(async_execute)  # nbclient binds its own async_execute the same way

        def create_kernel_manager(self) -> "KernelManager":
            return local_transport(super().create_kernel_manager())  # no TCP port, no warning

        def handle_comm_msg(self, outs: "list[NotebookNode]", msg: dict[str, Any], cell_index: int) -> None:
            super().handle_comm_msg(outs, msg, cell_index)
            content = msg["content"]
            state = content.get("data", {}).get("state")
            if state is None:
                return
            model = self._models.setdefault(content["comm_id"], {})
            model.update(state)
            wanted = list(self.click)
            if 0 <= cell_index < len(self.nb.cells):
                cell = self.nb.cells[cell_index]
                queued = self.queued_clicks.get(id(cell))
                wanted = queued if queued is not None else cell_clicks(cell.get("metadata"), wanted)
            if self.kc is not None and _press_if_wanted(self.kc, content["comm_id"], model, wanted, self.clicked):
                self.clicked.append(content["comm_id"])

    return AutoClickClient


def _press_if_wanted(kc: "KernelClient", comm_id: str, model: dict[str, object], wanted: list[str],
                     clicked: list[str]) -> bool:
    """Press the button whose widget state is ``model``, when its label is ``wanted``, it is
    enabled and not pressed before; whether it was pressed."""
    named = model.get("description") in wanted or (model.get("tooltip") or None) in wanted
    if (model.get("_model_name") != "ButtonModel" or not named
            or model.get("disabled") or comm_id in clicked):
        return False
    kc.shell_channel.send(kc.session.msg("comm_msg", {
        "comm_id": comm_id, "data": {"method": "custom", "content": {"event": "click"}},
    }))
    return True


CANCEL_FAILED = "Cancel the run: the request failed"
"""The failed-request card's **Cancel**, by its tooltip (``view.retry.CANCEL_FAILED_TOOLTIP``; not the
retry countdown's Cancel, which would end an automatic retry). Nobody watches an unattended run: a
request that failed for good (401, 400) fails the cell, rather than wait for **Retry** / **Cancel**
until the cell's timeout (300 s) — a batch item's row then said ``CellTimeoutError: ------``."""

GRANTING = frozenset({"Allow", "Allow always (this session)"})
"""The prompt buttons that let a tool run (the others deny, retry, cancel or stop)."""


def cell_clicks(metadata: object, default: list[str]) -> list[str]:
    """The buttons a cell's ``{"nbagent": {"click": [...]}}`` names, else ``default``. Only a list of
    strings counts: a string was matched by substring (``"Allow always (this session)"`` pressed
    *Allow* too), and an ``nbagent`` key that is not an object raised in the message handler and
    ended the run.

    The cell's list is the notebook's, which may have come from anyone: it picks among answers, it
    never grants what the run does not. Where ``default`` presses no granting button (the batch's
    ``Deny``: only ``--allow`` runs), the cell's *Allow* and *Allow always* are dropped, and a list
    left empty by that is ``default``."""
    mark = metadata.get("nbagent") if isinstance(metadata, Mapping) else None
    click = mark.get("click", default) if isinstance(mark, Mapping) else default
    if not (isinstance(click, list) and all(isinstance(c, str) for c in click)):
        return default
    if GRANTING.isdisjoint(default):
        kept = [c for c in click if c not in GRANTING]
        kept = kept if kept or not click else list(default)
        # Nobody watches: a request that failed for good still fails the cell at once, whatever the
        # cell picked (its ["Deny"] waited on Retry / Cancel until the cell's timeout, 300 s an item).
        wants_failure_answer = CANCEL_FAILED in default and not {"Retry", CANCEL_FAILED} & set(kept)
        return [*kept, CANCEL_FAILED] if wants_failure_answer else kept
    return list(click)


class _BridgeComm:
    """The bridge's comm on the client side: nbclient gives it the kernel's messages."""

    def __init__(self, send: Callable[[Mapping[str, object]], None], document: "NotebookDocument") -> None:
        self.send, self.document = send, document

    def handle_msg(self, message: dict[str, Any]) -> None:
        match message["content"].get("data"):
            case {"type": "request"} as request:
                self.send(self.document.answer(request))


def _bridge_comm(client: "NotebookClient", document: "NotebookDocument", comm_id: str) -> _BridgeComm:
    """The kernel opened the bridge: say hello, then answer its requests on the client's document."""
    def send(data: Mapping[str, object]) -> None:
        kc = client.kc
        if kc is None:  # the run ended: nobody is listening
            return
        kc.shell_channel.send(kc.session.msg("comm_msg", {"comm_id": comm_id, "data": dict(data)}))

    send(document.hello())
    return _BridgeComm(send, document)


async def _run_queued_cells(client: "NotebookClient", document: "NotebookDocument", reset_kc: bool,
                            kwargs: dict[str, object]) -> "NotebookNode":
    """``NotebookClient.async_execute`` with the document kept in step (see :mod:`.document.nbformat_frontend`)."""
    from nbclient.util import ensure_async

    if reset_kc and client.owns_km:
        await client._async_cleanup_kernel()
    client.reset_execution_trackers()
    async with client.async_setup_kernel(**kwargs):
        kc = client.kc
        assert kc is not None  # async_setup_kernel made it
        running: list[NotebookNode | None] = [None]  # the cell executing now
        _send_cell_ids(kc, lambda: running[0])
        info = await client.async_wait_for_reply(await ensure_async(kc.kernel_info()))
        if info is not None and "language_info" in info["content"]:
            client.nb.metadata["language_info"] = info["content"]["language_info"]
        document.queued = {str(c.get("id")) for c in client.nb.cells}  # Run All's queue: never deleted
        queued = {id(c): (c.get("cell_type"), c.get("source")) for c in client.nb.cells}  # as Run All sent them
        for cell in list(client.nb.cells):
            document.sync()
            index = next((i for i, c in enumerate(client.nb.cells) if c is cell), None)
            if index is None:
                continue  # deleted while an earlier cell ran (never by nbagent: queued cells stay)
            document.running, running[0] = cell.get("id"), cell
            try:
                with as_queued(cell, queued[id(cell)]):
                    await client.async_execute_cell(cell, index, execution_count=client.code_cells_executed + 1)
            finally:
                document.running, running[0] = None, None
                document.queued.discard(str(cell.get("id")))
                document.sync()
        client.set_widgets_metadata()
    return client.nb


@contextlib.contextmanager
def as_queued(cell: "NotebookNode", queued: tuple[object, object]) -> Iterator[None]:
    """Run ``cell`` as it was when the run queued it (``queued``: its type and source then), as Run
    All does: JupyterLab sends every queued cell's source at once, so a cell rewritten while an
    earlier one runs still runs what was queued. nbclient reads a cell when it reaches it, so the
    model's ``notebook_edit`` of a cell below its agent cell (allowed, or ``--allow notebook_edit``
    in ``nbagent.batch --notebook``, where every question is denied) ran the model's code unasked.
    The model's text is the cell's again afterwards (outputs of the queued code under it, as in
    JupyterLab), unless the cell was rewritten while it ran."""
    edited = cell.get("cell_type"), cell.get("source")
    if edited == queued:
        yield
        return
    cell["cell_type"], cell["source"] = queued
    try:
        yield
    finally:
        if (cell.get("cell_type"), cell.get("source")) == queued:
            cell["cell_type"], cell["source"] = edited
            if edited[0] != "code":  # a code cell the model made Markdown: JupyterLab drops its outputs
                cell.pop("outputs", None)
                cell.pop("execution_count", None)


def _send_cell_ids(kc: "KernelClient", running: Callable[[], "NotebookNode | None"]) -> None:
    """Make ``kc.execute`` put the running cell's metadata and id (``cellId``) in the request's
    metadata, as JupyterLab and Notebook 7 do: the kernel places the agent's cells below it, and
    replays (or says why it does not) from the record the cell carries."""
    def execute(code: str, silent: bool = False, store_history: bool = True,
                user_expressions: dict[str, object] | None = None,
                allow_stdin: bool | None = None, stop_on_error: bool = True) -> str:
        content = {"code": code, "silent": silent, "store_history": store_history,
                   "user_expressions": user_expressions or {}, "allow_stdin": bool(allow_stdin),
                   "stop_on_error": stop_on_error}
        msg = kc.session.msg("execute_request", content)
        cell = running()
        if cell is not None and cell.get("id"):
            msg["metadata"].update(dict(cell.get("metadata") or {}))
            msg["metadata"]["cellId"] = cell["id"]
        kc.shell_channel.send(msg)
        return str(msg["header"]["msg_id"])

    setattr(kc, "execute", execute)  # noqa: B010 - this client's execute, not the class's


def __getattr__(name: str) -> object:
    if name == "AutoClickClient":
        return client_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def run_notebook(src: str | Path, dst: str | Path | None = None, *, kernel_name: str = "nbagent",
                 timeout: int = 300, click: Sequence[str] = ("Allow", CANCEL_FAILED),
                 cwd: str | Path | None = None) -> "NotebookNode":
    """Execute ``src`` (answering prompts), write it to ``dst`` if given, return the notebook."""
    nbformat = _need("nbformat")
    nb = nbformat.read(str(src), as_version=4)
    client = client_class()(nb, kernel_name=kernel_name, timeout=timeout, click=list(click),
                             resources={"metadata": {"path": str(cwd or Path(src).parent)}},
                             notebook_path=Path(src).name)
    try:
        client.execute()
    except Exception as exc:
        # nbclient answers Ctrl-C (SIGINT, SIGTERM) itself, by shutting the kernel down; the cell then
        # fails with nbclient's own AssertionError. A failure it is not: a batch wrote it as the
        # item's finished result, which "run the same command again" then never ran again.
        if getattr(client, "_async_cleanup_kernel_future", None) is not None:
            raise KeyboardInterrupt from exc
        raise
    finally:
        # Written when a cell fails too (up to the failing cell and its error): a batch item's or
        # a CI run's only record of where it stopped and what its agent cells did before it.
        if dst is not None:
            Path(dst).parent.mkdir(parents=True, exist_ok=True)
            nbformat.write(nb, str(dst))
    return nb


def export_html(nb: "NotebookNode", dst: str | Path) -> Path:
    """Static HTML of an executed notebook (the transcript and tables show without widgets)."""
    import copy

    HTMLExporter = _need("nbconvert").HTMLExporter

    # A static page cannot run widgets (their JavaScript would come from a CDN); where an output
    # carries its own static HTML, show that instead of an empty widget placeholder.
    nb = copy.deepcopy(nb)
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            if "text/html" in data:
                data.pop("application/vnd.jupyter.widget-view+json", None)
    nb.metadata.pop("widgets", None)
    body, _ = HTMLExporter().from_notebook_node(nb)
    Path(dst).write_text(body, encoding="utf-8")
    return Path(dst)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m nbagent.notebook.autorun", description=__doc__)
    parser.add_argument("src")
    parser.add_argument("dst")
    parser.add_argument("--html", default=None)
    parser.add_argument("--kernel", default="nbagent")
    parser.add_argument("--timeout", type=int, default=300)
    parser.add_argument("--cwd", default=None, help="the kernel's working directory (default: the notebook's folder)")
    args = parser.parse_args(argv)
    nb = run_notebook(args.src, args.dst, kernel_name=args.kernel, timeout=args.timeout, cwd=args.cwd)
    print(f"executed notebook: {args.dst}")
    if args.html:
        print(f"static HTML:       {export_html(nb, args.html)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
