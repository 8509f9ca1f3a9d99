"""Who decides an external client's write or run: the admin policy, the permission mode, the user.

The rules (docs/mcp.md, docs/security.md):

- the admin's ``allowed_tools`` holds for clients as for nbagent's model (a client's edit is
  ``notebook_edit``, a run of a cell ``notebook_run``, code ``python``);
- ``plan`` mode refuses every write and run;
- the user's own rules, which hold for nbagent's model in every mode (``bypass`` too), hold for
  clients: the session's ``deny`` list and its ``pre_tool_use`` hook refuse a call before anyone is
  asked (``rules``, :func:`nbagent.engine.loop.user_rules.refused_by_user_rules`);
- every other mode asks: ``accept_edits``, ``bypass`` and the ``allow`` list were set for nbagent's
  own model, and a client cannot borrow them, nor raise the mode (no tool changes settings);
- "Allow always" covers one tool of one client, until the server stops: of the client as
  :mod:`.clients` keys it (its claimed name *and* its MCP session), never of a name alone, which
  another client could claim (see :class:`Request`);
- nothing is asked, and nothing runs, while no notebook front-end answers: the card would be seen
  by nobody, and a call allowed always does not run either (the user closed the notebook). While
  a card waits, the front-end is checked every ``ALIVE_EVERY_S``; a notebook closed meanwhile, or
  no answer within ``timeout_s``, is a refusal the client is told;
- a card is asked only where it is seen: the serve cell must still show the panel (``hidden``
  says why not: its output cleared or hidden, the cell deleted), before the card is added and while it waits.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from dataclasses import dataclass
from typing import Awaitable, Callable

from ...engine.contracts.errors import NbAgentError
from ...engine.contracts.events import CallPreview
from ...engine.contracts.json_types import JSONObject
from ...engine.contracts.permissions import Allow, Deny
from .. import waiting
from ..view.prompts import PermissionPrompt
from .card import ServePanel

Rules = Callable[[str, JSONObject], Awaitable["str | None"]]
Hidden = Callable[[], Awaitable["str | None"]]
"""``hidden()``: why the panel is not shown in the notebook now (None: it is, or cannot be told)."""
"""``rules(tool, tool_input)``: why the user's deny list or ``pre_tool_use`` hook refuses the call (None: they do not)."""


async def no_rules(_tool: str, _input: JSONObject) -> str | None:
    return None


async def always_shown() -> str | None:
    return None

ASK_TIMEOUT_S = 300.0
"""How long a card waits for a click before the call is refused."""
ALIVE_EVERY_S = 5.0
MAX_INPUT_CHARS = 100_000
"""The longest ``source`` (``notebook_edit``) or ``code`` (``run_code``) a client may send. The card
shows it whole, highlighted on the kernel's loop before anyone is asked: a multi-MB input would
stall the kernel for seconds. A longer one is refused before asking (:func:`too_long`)."""


def too_long(field: str, text: str) -> str | None:
    """Why a client's ``field`` is refused before asking (over :data:`MAX_INPUT_CHARS`), else None."""
    if len(text) <= MAX_INPUT_CHARS:
        return None
    return (f"The {field} is {len(text):,} characters; at most {MAX_INPUT_CHARS:,} are accepted (the user reads "
            f"it whole in the notebook before it runs): not asked, not run. Send a shorter one, or split it "
            f"(several cells, or code that reads a file).")


NOT_SHOWN = ("{why}, so the permission card {when}: not run. Ask the user to show that output again, or to "
             "run `%agent serve` again if it was cleared or deleted (the server and its token stay), then call again.")
"""A card the user cannot see waited unseen for ``timeout_s`` (the panel's widget lives on in the
kernel after its output is cleared): refused at once instead, before asking or while waiting."""

STOPPED = "The user stopped the server (%agent serve --stop) while this call waited for a click: not run."


CLIENT_TOOL_NAMES = {"python": "run_code"}
"""The client's name of a tool the policy, the hooks and the cards know by nbagent's own name."""


class CallRefused(NbAgentError):
    """A client's call was denied, timed out or could not be asked; the message says which and why."""


@dataclass(frozen=True)
class Request:
    """One call that must be decided: which client, which nbagent tool, what it does."""

    client: str
    tool: str
    summary: str
    detail: str = ""
    key: tuple[str, str] = ("", "")
    """Whom an "Allow always" is given to: the client's ``(name, MCP session id)``. A client with
    no session (the stateless protocol) has only its claimed name to be known by."""
    preview: CallPreview | None = None
    """What an edit changes, read from the document when asked (which cell, as it is and as it
    will be): the card shows it instead of ``detail``, as nbagent's own cards do."""
    input: JSONObject | None = None
    """The call as nbagent's own tool ``tool`` takes it: what the user's hooks see."""
    always_asks: str | None = None
    """Why this call asks even when the client was allowed ``tool`` always (a Markdown cell that
    loads from the web when it renders, as nbagent's own ``notebook_edit`` says): no grant covers it,
    and its "Allow always" allows it once."""


@dataclass(frozen=True)
class Allowed:
    """How the call was allowed: ``by`` says who (the record shows it)."""

    by: str
    card: PermissionPrompt | None = None
    """The card the user clicked (None: not asked): it says so if the call then does not happen."""


class ServeGate:
    """Decide each write and run of the clients of one server."""

    def __init__(self, panel: ServePanel, mode: Callable[[], str], alive: Callable[[], Awaitable[bool]],
                 allowed_by_admin: Callable[[str], bool], timeout_s: float = ASK_TIMEOUT_S,
                 rules: Rules = no_rules, redact: Callable[[], Callable[[str], str]] | None = None,
                 hidden: Hidden = always_shown) -> None:
        self.panel = panel
        self.hidden = hidden
        self.redact = redact
        """Makes the redaction of the secrets at hand: a card quotes the user's cells (the one a client
        runs or overwrites), and nbagent's own cards show them redacted."""
        self.rules = rules
        self.mode = mode
        self.alive = alive
        self.allowed_by_admin = allowed_by_admin
        self.timeout_s = timeout_s
        self._always: dict[tuple[tuple[str, str], str], str] = {}  # (client key, tool) -> its shown name
        self._waiting: set[asyncio.Future[Allow | Deny]] = set()
        self.stopped = False

    def stop(self) -> int:
        """The server stops (``%agent serve --stop``; any thread): every call still waiting for a
        click is refused, its card settled, and nothing is asked or allowed any more. A card left
        waiting kept its client hanging for ASK_TIMEOUT_S, and a click on it ran the call after
        the user had stopped the server. Returns how many calls were waiting."""
        self.stopped = True
        waiters = list(self._waiting)
        for waiter in waiters:
            try:
                waiter.get_loop().call_soon_threadsafe(waiter.cancel)
            except RuntimeError:  # its loop is closed (the kernel exits): nothing can run it now
                waiter.cancel()
        return len(waiters)

    def always(self) -> list[str]:
        """``tool for client`` pairs allowed always (for ``%agent status``)."""
        return sorted(f"{tool} for {name}" for (_key, tool), name in self._always.items())

    async def check(self, request: Request) -> Allowed:
        """Return how the call is allowed, or raise :class:`CallRefused` (kernel loop only)."""
        if self.stopped:
            raise CallRefused(STOPPED)
        if not self.allowed_by_admin(request.tool):
            raise CallRefused(f"{request.tool} is not in the admin policy's allowed_tools: not run.")
        mode = self.mode()
        if mode == "plan":
            raise CallRefused("The notebook is in plan mode: writes and runs are refused "
                              "(the user can switch with %agent permissions default).")
        await self.by_rules(request.tool, request.input or {})
        # Before a grant is looked at: "nothing runs while the notebook is closed" holds for calls
        # allowed always too (the user closed the tab; the kernel, and the server, live on).
        if not await self.alive():
            raise CallRefused("The notebook is not open in a front-end with the nbagent extension, so no one can "
                              "be asked: not run. Open the notebook in JupyterLab or Notebook 7 and try again.")
        if self.stopped:  # stopped while the rules or the page were asked (each a round trip)
            raise CallRefused(STOPPED)
        if request.always_asks is None and (request.key, request.tool) in self._always:
            return Allowed("the user (Allow always, earlier)")
        return await self._ask(request, mode)

    async def by_rules(self, tool: str, tool_input: JSONObject) -> None:
        """Raise :class:`CallRefused` when the user's deny list or ``pre_tool_use`` hook refuses the call."""
        why = await self.rules(tool, tool_input)
        if why is not None:
            raise CallRefused(f"{why} (the user's own rules hold for MCP clients too: not asked, not run)")

    async def _ask(self, request: Request, mode: str) -> Allowed:
        reason = f"permission mode {mode}; external clients always ask" + (
            f"; {request.always_asks}" if request.always_asks else "")
        clean = self.redact() if self.redact is not None else str
        preview = request.preview
        if preview is not None:
            preview = dataclasses.replace(preview, summary=clean(preview.summary),
                                          before=None if preview.before is None else clean(preview.before),
                                          after=None if preview.after is None else clean(preview.after))
        why = await self.hidden()
        if why is not None:
            raise CallRefused(NOT_SHOWN.format(why=why, when="could not be shown"))
        prompt = self.panel.ask(request.client, request.tool, clean(request.summary), clean(request.detail), reason,
                                preview=preview)
        waiter = asyncio.ensure_future(waiting.wait_for_decision(prompt.decision))
        self._waiting.add(waiter)
        deadline = time.monotonic() + self.timeout_s
        note = "cancelled"  # the client went away
        try:
            while not waiter.done() and not self.stopped:
                left = deadline - time.monotonic()
                if left <= 0:
                    note = "timed out"
                    raise CallRefused(f"No answer in the notebook within {self.timeout_s:g} s: not run.")
                await asyncio.wait({waiter}, timeout=min(ALIVE_EVERY_S, left))
                if not waiter.done() and not await self.alive():
                    note = "the notebook closed"
                    raise CallRefused("The notebook was closed while the user was asked: not run.")
                why = None if waiter.done() else await self.hidden()
                if why is not None:
                    note = "the card was no longer shown"
                    raise CallRefused(NOT_SHOWN.format(why=why, when="was no longer shown while the user was asked"))
            if self.stopped:  # a click that came with the stop does not run the call either
                note = "the server stopped"
                raise CallRefused(STOPPED)
        finally:
            self._waiting.discard(waiter)
            if not waiter.done() or waiter.cancelled() or self.stopped:
                waiter.cancel()
                prompt.settle(None, note)
        decision = waiter.result()
        prompt.settle(decision)
        if isinstance(decision, Deny):
            why = f": {decision.reason}" if decision.reason else " (no reason given)"
            # Named as the client called it: its run_code is the policy's "python", a tool it does not have.
            called = CLIENT_TOOL_NAMES.get(request.tool, request.tool)
            raise CallRefused(f"The user denied this {called} call in the notebook{why}.")
        assert isinstance(decision, Allow)
        if decision.always and request.always_asks is None:
            self._always[(request.key, request.tool)] = request.client
            return Allowed("the user (Allow always)", prompt)
        return Allowed("the user (Allow)", prompt)
