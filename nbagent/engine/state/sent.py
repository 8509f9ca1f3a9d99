"""What the model saw at one request, kept as a reference into the session's history, and how
that reference is saved in the task folder (``sent_requests.json``) so it survives a resume."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, ClassVar, Sequence

from ..contracts.events import RequestRecord
from ..contracts.messages import Message
from ..contracts.saved import NonNegInt, saved_record


@dataclass(frozen=True, slots=True)
class SentRequest:
    """What the model saw at one request, kept as a reference into the session, not a copy.

    ``messages`` is rebuilt on demand (for ``%agent saw`` and the explorer) from the session's
    history: its first ``history_len`` messages (the last one cut to ``last_blocks`` blocks, in
    case a later prompt was merged into it), ``deleted_range`` hidden and the context updates as
    of ``ts``. A copy per request made memory quadratic in a long session. ``system`` is shared
    between requests (the system prompt is static for a session), ``tools`` names the tools offered.
    """

    request: int
    turn: int
    model: str
    system: str
    tools: tuple[str, ...]
    history_len: int
    last_blocks: int
    deleted_range: tuple[int, int] | None
    ts: int
    rebuild: Callable[["SentRequest"], list[Message]] = field(repr=False, compare=False)

    @property
    def messages(self) -> list[Message]:
        """The messages of the request as sent (without the provider's cache breakpoints)."""
        return self.rebuild(self)


@saved_record
@dataclass(frozen=True, slots=True)
class SavedSent:
    """One line of ``sent_requests.json``: a :class:`SentRequest` without its ``rebuild``.

    ``system`` and ``tools`` are written only when they differ from the line before (None: as
    before): the system prompt is the same for nearly every request, and a copy per line would
    make the file grow by the prompt's size on every request.
    """

    request: NonNegInt
    turn: NonNegInt
    model: str
    history_len: NonNegInt
    last_blocks: NonNegInt
    deleted_range: tuple[NonNegInt, NonNegInt] | None
    ts: int
    system: str | None = None
    tools: tuple[str, ...] | None = None
    __omit_when_default__: ClassVar[tuple[str, ...]] = ("system", "tools")
    """Written only when set (see :data:`~nbagent.engine.disk.persist.OMIT_WHEN_DEFAULT`)."""


@dataclass
class SharedValues:
    """One object per distinct system prompt and tool list, shared by every request that sent it
    (a copy per request would be kept 10,000 times in a long session)."""

    systems: dict[str, str] = field(default_factory=dict)
    tools: dict[tuple[str, ...], tuple[str, ...]] = field(default_factory=dict)

    def share(self, system: str, tools: tuple[str, ...]) -> tuple[str, tuple[str, ...]]:
        """The shared objects equal to ``system`` and ``tools`` (these, the first time)."""
        return self.systems.setdefault(system, system), self.tools.setdefault(tools, tools)


def to_saved(sent: SentRequest, before: SentRequest | None) -> SavedSent:
    """The line saving ``sent``, the request saved just before it being ``before`` (None: the first)."""
    same_system = before is not None and (before.system is sent.system or before.system == sent.system)
    same_tools = before is not None and before.tools == sent.tools
    return SavedSent(request=sent.request, turn=sent.turn, model=sent.model, history_len=sent.history_len,
                     last_blocks=sent.last_blocks, deleted_range=sent.deleted_range, ts=sent.ts,
                     system=None if same_system else sent.system, tools=None if same_tools else sent.tools)


def from_saved(lines: Sequence[SavedSent], rebuild: Callable[[SentRequest], list[Message]],
               shared: SharedValues) -> list[SentRequest]:
    """The requests ``lines`` save, each rebuilt with ``rebuild``; ``system`` and ``tools`` objects
    are shared through ``shared`` (as :meth:`Session.sent_request` shares them). A first line
    without them is refused (``ValueError``): nothing came before it to take them from."""
    out: list[SentRequest] = []
    system: str | None = None
    tools: tuple[str, ...] | None = None
    for line in lines:
        system = line.system if line.system is not None else system
        tools = line.tools if line.tools is not None else tools
        if system is None or tools is None:
            raise ValueError(f"request {line.request} has no system prompt or tools, and no line before it has")
        system, tools = shared.share(system, tools)
        out.append(SentRequest(line.request, line.turn, line.model, system, tools, line.history_len,
                               line.last_blocks, line.deleted_range, line.ts, rebuild))
    return out


def matching_records(lines: Sequence[SavedSent], records: Sequence[RequestRecord]) -> list[SavedSent]:
    """The lines that describe ``records`` (matched by request number, turn and time). A process
    killed between a rollback's rewrite of the request log and of this one leaves lines of requests
    rolled back: they, and every line after the first such one, are dropped."""
    kept: list[SavedSent] = []
    for line in lines:
        record = records[line.request - 1] if 0 < line.request <= len(records) else None
        if record is None or record.turn != line.turn or record.ts != line.ts:
            break
        kept.append(line)
    return kept
