"""Whether the page running an agent cell still shows it: asked before a prompt waits on a click,
every few seconds while it waits, and at the turn's end (a page reloaded meanwhile gets the turn's
transcript written into the cell: its outputs went to the page that ran it)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from .. import waiting
from .bridge import BridgeError, BridgeUnavailable, executing_cell_id, executing_client, executing_request
from .embedded import in_kernel

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from .bridge import Bridge
    from .bridge_types import CellJSON, OutputJSON


def shown_check(bridge: "Bridge") -> "Callable[[], Awaitable[bool]]":
    """What a view asks before it waits on a click, and every few seconds while it waits: is the
    cell running now (taken here, while it runs) still in the notebook, and running there? False
    only when the front-end answers that it is not: deleted while queued, the page was reloaded
    or opened again (the cell is there but idle: that page never ran it, so no prompt shows in it),
    or the page that runs it shows it with its outputs cleared (Edit > Clear Outputs; or the cell
    run again while it ran, which queued it anew: the prompt went with the outputs); or no
    page has answered for :data:`~nbagent.notebook.waiting.NO_PAGE_S` (the notebook's tabs closed)."""
    cell_id, client = executing_cell_id(), executing_client()
    if not in_kernel():  # plain IPython (a terminal, a script): no page can show a widget
        return _nowhere
    if cell_id is None and not bridge.ever_connected and not _widgets_shown():
        return _nowhere  # nbclient, papermill, nbconvert: a client that shows nothing

    unanswered_since: float | None = None
    last_unanswered = 0.0

    def no_page_yet() -> bool:
        """No page answers now: shown for :data:`~nbagent.notebook.waiting.NO_PAGE_S` (a page may be reconnecting), then
        taken as gone (every tab of the notebook closed: the prompt shows nowhere). Only checks in
        a row count: after a longer gap than a wait's checks leave, no prompt waited in between (it
        was clicked: a page was there), so an unanswered check before it says nothing now."""
        nonlocal unanswered_since, last_unanswered
        now = time.monotonic()
        if unanswered_since is None or now - last_unanswered > _checks_apart_s():
            unanswered_since = now
        last_unanswered = now
        return now - unanswered_since < waiting.NO_PAGE_S

    async def shown() -> bool:
        nonlocal unanswered_since
        if cell_id is None or not bridge.ever_connected or bridge.version < 2:
            return True
        if bridge.runs_elsewhere(client):
            return True  # a console on the notebook's kernel: the prompt shows there, in no notebook
        if not bridge.connected and not await bridge.reconnect():
            return no_page_yet()
        try:
            found = await bridge.request("find", cell_id=cell_id)  # asks the page running the cell
        except BridgeUnavailable:
            return no_page_yet()
        except BridgeError:
            return True
        unanswered_since = None
        index = found.get("index")
        if isinstance(index, int) and index < 0:
            setattr(shown, waiting.LEFT_PAGE, True)  # deleted while queued: see waiting.LEFT_PAGE
            return False
        if found.get("running") is not False:
            # Shown running ([*]), yet with no outputs (its live view, the prompt in it, went): the
            # page emptied them, as JupyterLab and Notebook 7 do when the cell is run again while it
            # runs (Shift+Enter twice, Run All; a reloaded page the user ran it in again): a second
            # run queued, the first run's later outputs sent nowhere. Where the kernel session that
            # runs the cell is not known (an older kernel), as before: shown. Nor when its displays
            # go to an ipywidgets Output (``with out:``): the prompt shows there, maybe in another cell.
            seen = found.get("outputs") != 0 or client is None or _in_an_output_widget()
            if not seen:  # run again while it ran: that run is queued behind this one
                setattr(shown, waiting.LEFT_PAGE, True)
            return seen
        if not _still_there(bridge, client):  # reloaded, or opened again: the page now showing the cell never ran it
            setattr(shown, waiting.LEFT_PAGE, True)  # and the user may queue cells there behind it
            return False
        outputs = found.get("outputs")  # an older front-end does not say: read the notebook
        return outputs > 0 if isinstance(outputs, int) else await _has_outputs(bridge, cell_id)

    return shown


def _checks_apart_s() -> float:
    """The longest two checks of one wait are apart: the pause between them, then a request that
    goes unanswered, the comm reopened, its hello awaited, and the request sent again."""
    from ..waiting import SHOWN_EVERY_S
    from .bridge import HELLO_WAIT_S, REQUEST_TIMEOUT_S

    return SHOWN_EVERY_S + 2 * REQUEST_TIMEOUT_S + 2 * HELLO_WAIT_S


async def _has_outputs(bridge: "Bridge", cell_id: str) -> bool:
    """Whether the cell still has outputs (the prompt among them) in the page that runs it, which
    shows it idle: after a failed ``raises-exception`` cell under Run All it does, with the prompt;
    after Edit > Clear Outputs (of the cell, or of all cells) it has none, and the prompt is gone from
    every page while the kernel would wait Busy for ever."""
    try:
        cells = (await bridge.request("read")).get("cells", [])
    except (BridgeUnavailable, BridgeError):
        return True
    cell = next((c for c in cells if isinstance(c, dict) and c.get("id") == cell_id), None)
    return cell is None or bool(cell.get("outputs"))


RELOADED_NOTE = ("ⓘ The page was reloaded (or the notebook opened again) while this turn ran: the turn's "
                 "live view went to the page that ran the cell. Here is the turn as it ended.\n")


MOVED_NOTE = ("ⓘ This cell's outputs stopped following its run (it was moved, deleted and brought back, or its "
              "outputs cleared or reverted, while the turn ran): here is the turn as it ended.\n")


async def show_on_reloaded_page(bridge: "Bridge", shown: "dict[str, str]") -> bool:
    """Write the turn's final transcript (``shown``) into the running agent cell when the page
    now showing the notebook did not run it (reloaded, or the notebook opened again): a cell's
    outputs go only to the page that ran it, so the new page, and the notebook it saves, would
    keep what was saved before the turn (no answer under the turn's cells). Also where the page
    that ran it shows it idle without the transcript: a cell moved while it ran (dragged, or cut
    and pasted) is a new cell there, whose outputs stopped at the move, and the saved notebook
    would keep the live view's first line only. Only while the cell still holds the code that
    ran; True when written."""
    cell_id, ran, client = executing_cell_id(), _ran_code(), executing_client()
    if cell_id is None or ran is None or not in_kernel() or not bridge.ever_connected or bridge.version < 2:
        return False
    try:
        if not bridge.connected and not await bridge.reconnect():
            return False
        found = await bridge.request("find", cell_id=cell_id)
        index = found.get("index")
        here = _still_there(bridge, client)
        if not isinstance(index, int) or index < 0 or (found.get("running") is not False and not here):
            return False  # deleted, or running in a page whose live view we cannot see from here
        if here and found.get("running") is True and found.get("outputs") == 0:
            # Run again while it ran: the page queued the next run and emptied the cell, which shows
            # that run next. Outputs written now would untrust the cell (bridge writes never render
            # trusted), and an untrusted cell shows no widget: the next run's Allow / Deny unseen.
            return False
        cells = (await bridge.request("read")).get("cells", [])
        cell = next((c for c in cells if isinstance(c, dict) and c.get("id") == cell_id), None)
        source = cell.get("source", "") if cell is not None else None
        if cell is None or ("".join(source) if isinstance(source, list) else source) != ran:
            return False  # edited meanwhile: the answer is not to this cell's text any more
        if here and _holds(cell, shown):
            # Its live view, replaced in place by the transcript: it followed the run (it still
            # runs there, or shows idle under Run All after a raises-exception cell). A cell the user
            # deleted and brought back (dd, then z) while it ran shows as running with the live
            # view's first line only: the turn's end went to the deleted cell's outputs.
            return False
        note = MOVED_NOTE if here else RELOADED_NOTE
        outputs: list[OutputJSON] = [{"output_type": "stream", "name": "stdout", "text": note},
                   {"output_type": "display_data", "data": dict(shown), "metadata": {}}]
        await bridge.request("replace", cell_id=cell_id, outputs=outputs)
    except (BridgeUnavailable, BridgeError):
        return False
    return True


def _holds(cell: "CellJSON", shown: "dict[str, str]") -> bool:
    """Whether the cell's outputs hold the turn's final transcript (its live view, replaced in place)."""
    outputs = cell.get("outputs")
    for output in outputs if isinstance(outputs, list) else []:
        data = output.get("data") if isinstance(output, dict) else None
        text = data.get("text/plain") if isinstance(data, dict) else None
        if ("".join(text) if isinstance(text, list) else text) == shown.get("text/plain"):
            return True
    return False


def _still_there(bridge: "Bridge", client: str | None) -> bool:
    """Whether the page that runs the cell (its kernel session ``client``) is still connected, so
    it shows the cell's live view: a cell it runs is not idle there, whatever ``find`` said.
    JupyterLab marks every cell Run All queued idle ([ ]) once one cell fails, yet runs them on
    when that cell is tagged ``raises-exception`` (as the agent's failed attempts are): ``running``
    False then is no sign of a reload. A reloaded page is a new session, so after a reload this
    is False and ``find`` decides."""
    return bridge.page_here(client)


def _in_an_output_widget() -> bool:
    """Whether the running cell's displays go to an ipywidgets ``Output`` (the cell runs ``with out:``):
    the front-end puts every output of the request that ``Output`` captures into the widget, wherever
    it is shown (another cell, a sidebar), so the running cell itself may have none while its prompt shows."""
    header = executing_request().get("header")
    msg_id = header.get("msg_id") if isinstance(header, dict) else None
    if not msg_id:
        return False
    from ipywidgets import Output
    from ipywidgets.widgets.widget import _instances  # every live widget (ipywidgets >= 8)

    return any(isinstance(w, Output) and w.msg_id == msg_id for w in list(_instances.values()))


def _ran_code() -> str | None:
    """The code of the cell the kernel is executing, as the page sent it."""
    content = executing_request().get("content")
    code = content.get("code") if isinstance(content, dict) else None
    return code if isinstance(code, str) else None


async def _nowhere() -> bool:
    return False


def _widgets_shown() -> bool:
    """Whether a front-end that renders widgets opened ipywidgets' control comm here (its widget
    manager does on connecting, where ipywidgets was imported by then). For a client that sends no
    cell id (JupyterLab and Notebook 7 do): nbclient, papermill and nbconvert open none."""
    from ipywidgets import Widget

    return getattr(Widget, "_control_comm", None) is not None
