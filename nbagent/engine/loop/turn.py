"""One turn's state and how it ends: the notices, the ``Done`` event, and the errors a run can
raise before it starts (the loop in :mod:`~nbagent.engine.loop.query` uses them)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import AsyncIterator, Iterable, Mapping, Sequence

from ..api_facts.models import get_model, has_stand_in_price, most_expensive_of_family
from ..api_facts.tokens import TokenCounter
from ..context import get_context_window_info
from ..contracts.config import RunLimits, SessionConfig, unpriced_budget_refusal
from ..contracts.errors import ErrorKind, NbAgentError
from ..contracts.events import Done, DoneReason, Event, Notice, ToolResult, ToolUse, Totals
from ..contracts.messages import ContentBlock, ToolResultBlockParam, ToolUseBlockParam, error_result, is_text
from ..contracts.provider import MessageComplete
from ..contracts.tool_api import MCP_TOOL_PREFIX
from ..state.session import Session
from .degrade import budget_stop_message
from .request import RequestCancelled
from .sanitize import Sanitizer, TooDeepError
from .structured import StructuredRun
from .tool_runner import ToolAnswer, ToolItem

UNANSWERED = {
    "error": "the request failed before the model answered; the user may ask again",
    "aborted": "the run was stopped before the model answered",
    "max_requests": "the request limit was reached before the model answered",
    "max_budget": "the budget was spent before the model answered",
}


async def refuse_call(use: ToolUseBlockParam, reason: str) -> AsyncIterator[ToolItem]:
    """Answer a call the boundary refused (a reused id, an input nested too deep) without running it."""
    uid, name = str(use.get("id", "")), str(use.get("name", ""))
    yield ToolUse(tool_use_id=uid, name=name, input=use.get("input"))
    yield ToolAnswer(error_result(uid, reason))
    yield ToolResult(tool_use_id=uid, name=name, content=reason, is_error=True)


class RunInProgressError(NbAgentError):
    """A second run was started on a session while one is in progress."""

    def __init__(self, running: str) -> None:
        super().__init__(f"a run is already in progress on this session (prompt: {running!r}); "
                         "wait for it to finish or abort it first")


class SessionClosedError(NbAgentError):
    """A prompt was given to a closed session (``Agent.close()``): refused before any request."""

    def __init__(self, task_dir: object) -> None:
        how = (f"continue it with Agent.resume({str(task_dir)!r})" if task_dir is not None
               else "start a new Agent (a session without a task folder cannot be resumed)")
        super().__init__(f"this Agent was closed; {how}")


def preview(prompt: str | Sequence[ContentBlock]) -> str:
    text = prompt if isinstance(prompt, str) else " ".join(str(b.get("text", "")) for b in prompt)
    text = " ".join(text.split())
    return text if len(text) <= 60 else text[:57] + "..."


def done_event(state: "TurnState", totals: Totals) -> Done:
    """The run's ``Done``: a structured run that got no valid answer is an error."""
    structured = state.structured
    if structured is None or state.reason != "end_turn":
        return Done(reason=state.reason, totals=totals, error=state.error, stopped=state.stopped)
    if structured.answered:
        return Done(reason="end_turn", totals=totals, output=structured.data)
    error = structured.error or "the model ended its turn without a structured answer"
    return Done(reason="error", totals=totals, error=error)


@dataclass
class TurnState:
    """How one turn is going: what ends it, and the tool results of the calls being answered."""

    turn: int
    model: str
    reason: DoneReason = "end_turn"
    error: str | None = None
    stopped: str | None = None  # which limit ended the turn, and what was spent against it
    answered: list[ToolResultBlockParam] = field(default_factory=list)
    structured: StructuredRun | None = None
    refused: dict[str, str] = field(default_factory=dict)  # tool_use id -> why it is not run
    child_env: Mapping[str, str] | None = None
    """The environment tools' processes get (without secrets), built on the turn's first tool call."""


STOP_NOTICES = {
    "max_tokens": "The answer was cut at max_tokens ({max_tokens}); raise max_tokens for longer answers.",
    "model_context_window_exceeded": "The answer was cut because the model's context window was full; it is "
                                     "kept and billed, and the conversation is shortened before the next request.",
    "pause_turn": "The model paused a long server-tool turn; nbagent sends its work back so it can continue.",
    "compaction": "The server compacted the conversation and paused; nbagent sends the summary back so the model "
                  "can continue.",
}


def stop_notice(complete: MessageComplete) -> Notice | None:
    """What the user should be told about a request's stop reason (None: nothing unusual)."""
    stop = complete.stop_reason
    if stop == "refusal":
        details = complete.stop_details or {}
        why = details.get("explanation") or "The model declined this request."
        category = f" ({details['category']})" if details.get("category") else ""
        return Notice(level="warning", message=f"Refused{category}: {why} The refused exchange stays in this "
                                               "transcript but is not sent with the next prompt.")
    template = STOP_NOTICES.get(stop or "")
    if template is None:
        return None
    return Notice(level="warning" if stop not in ("pause_turn", "compaction") else "info",
                  message=template.format(max_tokens=complete.usage.output_tokens))


def save_outcome(session: Session, state: TurnState) -> list[Event]:
    """Writes that failed during the turn: an error if the session is still unsaved (kept in
    memory; the next change retries), a warning if a later write caught up."""
    # What the session said during the turn (a deleted task folder written again) is said now.
    told: list[Event] = [Notice(level="warning", message=n) for n in session.notices]
    session.notices.clear()
    failures, session.save_failures = session.save_failures, []
    if not failures:
        return told
    if session.unsaved:
        state.reason = "error"
        state.error = (f"{failures[-1]}. The conversation is kept in memory and saving is retried with "
                       "the next change (or agent.save()).")
        return told
    return [*told, Notice(level="warning", message=f"{failures[0]} (saved again since).")]


def prompt_too_big(counter: TokenCounter, context_window: int, model: str,
                   new_blocks: list[ContentBlock]) -> str | None:
    """Why the prompt cannot be sent at all (it alone exceeds what the context may hold), or None."""
    info = get_context_window_info(context_window)
    tokens = counter.estimate_message({"role": "user", "content": new_blocks})
    if tokens <= info.max_allowed_size:
        return None
    return (f"The prompt is about {tokens:,} tokens, more than the {int(info.max_allowed_size):,} that fit in "
            f"the context of {model} ({info.context_window:,}-token window); it was not sent "
            "and is not kept. Shorten it, or put the text in a file and ask the agent to read parts of it.")


def checked_prompt(sanitizer: Sanitizer, config: SessionConfig, limits: RunLimits, counter: TokenCounter,
                   context_window: int, new_blocks: list[ContentBlock]) -> tuple[list[ContentBlock], int, str | None]:
    """The prompt's blocks as the boundary lets them in, how many secrets were replaced, and why
    the prompt cannot be sent at all (None: it can)."""
    try:
        new_blocks, replaced = sanitizer.value(new_blocks)
    except TooDeepError as exc:
        return [], 0, f"The prompt's content blocks are {exc}; it was not sent."
    too_big = unpriced_budget_error(config, limits) or prompt_too_big(counter, context_window, config.model, new_blocks)
    return new_blocks, replaced, too_big


def cancelled(state: TurnState, exc: RequestCancelled, session: Session) -> None:
    """How a turn whose request was cancelled ends: an error, or a budget stop (the gateway's
    budget, one line); a prompt too big for the window is taken back out of the conversation."""
    state.reason, state.error = "error", str(exc)
    if exc.kind is ErrorKind.BUDGET_EXCEEDED:
        state.reason, state.error, state.stopped = "max_budget", None, budget_stop_message(exc.message)
    if exc.kind is ErrorKind.CONTEXT_WINDOW_EXCEEDED and session.withdraw_prompt():
        state.error = f"{exc}" + (" The prompt was taken back out of the conversation, so the next"
                                  " (shorter) prompt is not merged into it.")


def usd(amount: float) -> str:
    """``$0.0012``: money in stop messages (4 decimals, as every cost nbagent shows). An amount
    above zero that 4 decimals would round to ``$0.0000`` (a budget of $0.000001, as notebook 04
    sets) keeps two significant digits: a limit the user set must never read as zero."""
    if amount <= 0 or amount >= 0.00005:
        return f"${amount:.4f}"
    digits = 1 - math.floor(math.log10(amount))  # two significant digits
    return "$" + f"{amount:.{digits}f}".rstrip("0")


@dataclass(frozen=True)
class PromptLimits:
    """The limits one prompt runs under. ``start`` is what the session had spent (budget figure)
    when the prompt began: the per-prompt budget counts only what was spent since."""

    max_requests: int | None
    budget: float | None
    session_budget: float | None
    start: float
    tokens: int | None = None
    session_tokens: int | None = None
    tokens_start: int = 0

    @classmethod
    def of(cls, config: SessionConfig, limits: RunLimits, spent: float, tokens_spent: int = 0) -> "PromptLimits":
        max_requests, budget = limits.resolve(config)
        tokens = limits.token_budget if limits.token_budget is not None else config.token_budget
        return cls(max_requests, budget, config.max_session_budget_usd, spent, tokens, config.session_token_budget,
                   tokens_spent)

    def reached(self, requests: int, spent: float, tokens_spent: int = 0) -> tuple[DoneReason, str] | None:
        """``(reason, message)`` when a limit stops the prompt before its next request."""
        if self.max_requests is not None and requests >= self.max_requests:
            return "max_requests", (f"stopped: this prompt's request limit {self.max_requests} reached "
                                    f"({requests} request(s) sent in this prompt)")
        return self.budget_reached(spent, tokens_spent)

    def budget_reached(self, spent: float, tokens_spent: int) -> tuple[DoneReason, str] | None:
        """``(reason, message)`` when the money or tokens spent stop the prompt (before a request
        or a retry: a retry is no new request, but the one that broke off was billed)."""
        tokens_in_prompt = max(tokens_spent - self.tokens_start, 0)
        if self.tokens is not None and tokens_in_prompt >= self.tokens:
            return "max_budget", (f"stopped: this prompt's token budget {self.tokens:,} reached "
                                  f"({tokens_in_prompt:,} tokens used in this prompt)")
        if self.session_tokens is not None and tokens_spent >= self.session_tokens:
            return "max_budget", (f"stopped: the session token budget {self.session_tokens:,} reached "
                                  f"({tokens_spent:,} tokens used in this session)")
        in_prompt = max(spent - self.start, 0.0)
        if self.budget is not None and in_prompt >= self.budget:
            return "max_budget", (f"stopped: this prompt's budget {usd(self.budget)} reached "
                                  f"({usd(in_prompt)} spent in this prompt)")
        if self.session_budget is not None and spent >= self.session_budget:
            return "max_budget", (f"stopped: the session budget {usd(self.session_budget)} reached "
                                  f"({usd(spent)} spent in this session)")
        return None


def unpriced_budget_error(config: SessionConfig, limits: RunLimits) -> str | None:
    """Why this prompt's dollar budget cannot be enforced (a model without any price), or None."""
    return unpriced_budget_refusal(config.model, config.prices, limits.max_budget_usd)


def unpriced_budget_notice(config: SessionConfig, limits: RunLimits, told: set[str]) -> list[str]:
    """Once per model (``told`` remembers): a model without prices has its cost shown as unknown, and
    a budget on it is enforced at a stand-in's prices; the line says how to give its prices."""
    if get_model(config.model, config.prices) is not None or config.model in told:
        return []
    told.add(config.model)
    budget = limits.resolve(config)[1]
    if budget is None:
        budget = config.max_session_budget_usd
    counted = "" if budget is None or not has_stand_in_price(config.model, config.prices) else (
        f"; the budget counts its requests at {most_expensive_of_family(config.model).id} prices (the most "
        "expensive of its family)")
    return [f"{config.model} has no prices in the model table, so its cost shows as unknown{counted}. Give its "
            "row to make it exact: %config AgentMagics.prices = {...} in a notebook, Agent(prices={...}) in "
            "Python (see docs/models.md, 'Your own rows')."]


def unknown_tool_notices(config: SessionConfig, offered: Iterable[str], told: set[str]) -> list[str]:
    """Once per entry (``told`` remembers): an ``allow`` or ``deny`` entry that names no tool of this
    session. Rules match names exactly, so ``--allow pythn`` allowed nothing and a mistyped deny
    denied nothing, without a word. An MCP tool's name is not checked: its server may still be
    connecting, or have stopped (which it says itself)."""
    known = {*offered, *(t if isinstance(t, str) else str(t.get("name", "")) for t in config.server_tools)}
    listed = f"tool names: {', '.join(sorted(known))}" if known else "it has no tools"
    notices = []
    for rule, names, effect in (("allow", config.allow, "allows nothing"), ("deny", config.deny, "denies nothing")):
        for name in names:
            if name in known or name.startswith(MCP_TOOL_PREFIX) or f"{rule}:{name}" in told:
                continue
            told.add(f"{rule}:{name}")
            notices.append(f"{rule} names {name!r}, but this session has no tool of that name, so it {effect} "
                           f"({listed}).")
    return notices


def take_structured_answer(session: Session, structured: StructuredRun | None) -> bool:
    """A structured run's model ended its turn: its text is the answer (checked against the schema).
    One not accepted is sent back once with its problems: True means go on (ask again)."""
    if structured is None or structured.finished:
        return False
    content = session.history[-1].get("content") if session.history else None
    text = content if isinstance(content, str) else "\n".join(
        str(b.get("text", "")) for b in content or () if is_text(b))
    told = structured.take(text)
    if told is None:
        return False
    session.append_results([{"type": "text", "text": told}])
    return True
