"""``%agent serve``: start, show or stop this notebook's MCP server (one per kernel)."""

from __future__ import annotations

from argparse import Namespace
from typing import TYPE_CHECKING

from IPython.core.error import UsageError
from IPython.core.magic_arguments import argument, magic_arguments

if TYPE_CHECKING:
    from ..magics_api import MagicsApi
    from .record import ExternalAction
    from .server import ServeServer

# Process-wide on purpose: one kernel serves its one notebook, and the kernel's exit (atexit) and
# %agent status must find the server without a session (serving needs none).
_SERVER: ServeServer | None = None


def current() -> ServeServer | None:
    """The running server, or None."""
    return _SERVER if _SERVER is not None and _SERVER.running else None


def _clients(text: str) -> int:
    value = int(text)
    if not 1 <= value <= 8:
        from argparse import ArgumentTypeError

        raise ArgumentTypeError("--clients takes 1 to 8")
    return value


@magic_arguments(name="agent serve")
@argument("--stop", action="store_true", help="Stop serving.")
@argument("--clients", type=_clients, default=None, metavar="N",
          help="How many MCP clients may be connected at once (default 1; given while serving, a restart).")
def serve(magics: MagicsApi, args: Namespace) -> None:
    """Serve this notebook to MCP clients (Claude Code, VS Code, Cursor) on 127.0.0.1; every edit
    and run asks here first."""
    global _SERVER
    from IPython.display import display

    running = current()
    if args.stop:
        if running is None:
            print("nbagent: not serving.")
            return
        running.stop()
        _SERVER = None
        print(f"nbagent: stopped serving {running.notebook}; the token no longer works.")
        return
    if running is not None and args.clients in (None, running.clients.max_clients):
        # Run again (the notebook was reopened, say): the same server shows its panel here.
        magics.document.connect()
        running.show_panel_here()
        print("\n".join(running.paste_lines()))
        print("nbagent: already serving; its permission cards show below (`%agent serve --stop`, then "
              "`%agent serve`, for a new port and token).")
        display(running.panel.widget)
        return
    if running is not None:  # another --clients: a restart, with a new port and token
        running.stop()
        print("nbagent: the earlier server stopped; its token no longer works.")
    from .server import ServeServer

    magics.document.connect()  # the bridge: the notebook tools and the cards need the front-end
    try:
        _SERVER = ServeServer(magics, max_clients=args.clients or 1)
    except RuntimeError as exc:  # no kernel loop, or uvicorn did not start: one line, the cell fails
        raise UsageError(f"nbagent: {exc}") from None
    print("\n".join(_SERVER.paste_lines()))
    display(_SERVER.panel.widget)


def status_line() -> str | None:
    """``%agent status``'s line, or None when not serving."""
    running = current()
    return running.status_line() if running is not None else None


def entries(magics: MagicsApi) -> list[ExternalAction]:
    """The current session's external actions (its folder's record, and the server's in memory),
    for ``%agent history``; also after a restart of the kernel, from the folder."""
    if _SERVER is not None:
        return _SERVER.log.entries()
    from pathlib import Path

    from .record import ActionLog

    sess = magics.current
    folder = sess.agent.session.task_dir if sess is not None else None
    return ActionLog(lambda: Path(folder) if folder is not None else None).entries()
