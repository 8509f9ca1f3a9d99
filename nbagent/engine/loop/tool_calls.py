"""The tool calls of one reply, answered in order: the loop's step after a request that called tools.

Each call is run (or refused, when the request boundary refused it) by
:mod:`~nbagent.engine.loop.tool_runner`; its events are logged and passed on, and its one answer
joins the next user message.
"""

from __future__ import annotations

from typing import AsyncGenerator, Callable, Mapping

from ..contracts.config import CREDENTIAL_ENV
from ..contracts.events import Event
from ..contracts.hooks import Hooks
from ..contracts.messages import ToolUseBlockParam
from ..contracts.permissions import PermissionGate
from ..contracts.tool_api import ToolContext, ToolLike
from ..credentials.env_secrets import ChildEnvironment
from .request_run import RequestRun
from .sanitize import Sanitizer
from .tool_runner import ToolAnswer, run_tool_call
from .turn import TurnState, refuse_call


async def answer_tool_calls(run: RequestRun, state: TurnState, uses: list[ToolUseBlockParam],
                            tools: Mapping[str, ToolLike], *, gate: PermissionGate, hooks: Hooks,
                            executor: object, sanitizer: Sanitizer,
                            refresh: Callable[[], Sanitizer] | None = None) -> AsyncGenerator[Event, None]:
    """Answer ``uses`` in order with ``tools`` (what the request offered) and append the answers
    as the next user message.

    The answers gather in ``state.answered``, not a local: an abort in the middle leaves them
    where the turn's repair (:meth:`Session.answer_dangling`) finds them. ``refresh`` makes the
    sanitizer again once code ran in the kernel (its new credential variables are secrets)."""
    session = run.session
    state.answered = []
    make_context = tool_context_factory(run, state, executor, sanitizer)
    for use in uses:
        run.guard.check()
        refused = state.refused.get(str(use.get("id")))
        calls = refuse_call(use, refused) if refused is not None else run_tool_call(
            use, tools=tools, gate=gate, guard=run.guard, make_context=make_context,
            turn=state.turn, output_limit=run.config.tool_output_limit,
            hooks=hooks, sanitizer=sanitizer, capture_limit=run.config.tool_capture_limit, refresh=refresh,
        )
        async for item in calls:
            if isinstance(item, ToolAnswer):  # kept for the next message, not shown
                state.answered.append(item.block)
            else:
                yield session.log(item)
    session.append_results(state.answered)
    state.answered = []


def tool_context_factory(run: RequestRun, state: TurnState, executor: object,
                         sanitizer: Sanitizer) -> Callable[[str], ToolContext]:
    """What each call of the turn runs with (the run's settings, the session's file state)."""
    cfg = run.config

    def make(tool_use_id: str) -> ToolContext:
        if state.child_env is None:  # once per turn, copied when a tool first reads it
            state.child_env = ChildEnvironment((*CREDENTIAL_ENV, *cfg.secret_env), sanitizer.secrets)
        return ToolContext(
            cwd=cfg.cwd, turn=state.turn, abort=run.control.abort_event, file_state=run.session.file_state,
            allowed_paths=cfg.allowed_paths, executor=executor, shell_enabled=cfg.shell,
            max_output_chars=cfg.tool_output_limit, tool_use_id=tool_use_id,
            env=state.child_env, capture_limit=cfg.tool_capture_limit,
            redact=sanitizer.redact,
        )

    return make
