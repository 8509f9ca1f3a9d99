"""What one request sends of the history: the context policy's layers, applied per request.

Steps 1 and 3 of :mod:`.request`: before a request, mask old tool results (:func:`mask_context`)
and let the context manager fit the rest (:func:`fit_context`, Cline's truncation, the last layer);
after a context-window error, hide more once (:func:`recover_overflow`); :func:`fit_attempt` runs the
first two for one attempt, and :func:`left_out_tokens` corrects its estimate for images left out. The server's own layers
travel in the request (:func:`server_edits`), and so do the mask layer's cache anchors
(:func:`mask_anchors`); :func:`model_request` builds the provider-neutral request from them. Each
action becomes a :class:`ContextAction` on the request's record.
"""

from __future__ import annotations

from typing import Callable, Literal, Sequence

from ..api_facts.caching import MAX_ANCHORS, anchorable
from ..api_facts.context_edit_types import ContextManagementParam
from ..api_facts.context_edits import unsupported_edits, without_edits
from ..api_facts.many_images import within_many_image_limit
from ..api_facts.models import get_model
from ..api_facts.rate_limits import RateLimitSnapshot
from ..api_facts.request_params import lenient_reasoning_params, server_tool_definitions
from ..api_facts.request_size import within_request_size
from ..context import ContextResult, Keep, RequestUsage, get_context_window_info, get_next_truncation_range
from ..context.mask import Masked, mask_old_results, next_masking_start
from ..context.mask_index import ResultIndex
from ..context.updates import ContextHistoryUpdates
from ..context.window import RangeLike, normalize_range, sent_position
from ..contracts.config import SessionConfig
from ..contracts.context_policy import ContextPolicy
from ..contracts.events import ContextAction, ContextTruncated, Notice
from ..contracts.json_types import JSONObject
from ..contracts.messages import Message
from ..contracts.provider import ModelRequest
from .request_run import RequestRun, Reread, _Attempts


def server_edits(config: SessionConfig, model: str) -> ContextManagementParam | None:
    """The policy's server layers as the ``context_management`` parameter, without the edits
    ``model`` does not take (the client-side layers stand in for them)."""
    info = get_model(model, config.prices)
    thinks = config.thinking_budget is not None or bool(info and info.capabilities.thinks_by_default)
    edits = config.context.server_edits(thinks=thinks)  # type: ignore[union-attr]  # parsed in SessionConfig
    return without_edits(edits, unsupported_edits(model, edits, config.prices)) if edits else None


def unsupported_notices(run: RequestRun, model: str) -> list[Notice]:
    """One notice per session and model whose server layers the model does not take."""
    edits = run.config.context.server_edits(thinks=True)  # type: ignore[union-attr]
    refused = unsupported_edits(model, edits, run.config.prices)
    told = run.session.context_notices
    if not refused or model in told:
        return []
    told.add(model)
    return [Notice(level="warning", message=(
        f"{model} does not take the server-side context edit(s) {', '.join(refused)} of the context policy "
        f"{run.config.context}; nbagent's client-side layers (masking, summary, truncation) stand in."))]


def mask_context(run: RequestRun, previous: RequestUsage | None, ts: int) -> Masked | None:
    """The mask layer: old tool results become placeholders, recorded at ``ts`` (see
    :mod:`~nbagent.engine.context.mask`); the session saves the updates at once."""
    policy = ContextPolicy.parse(run.config.context)  # stored parsed: returned as it is
    if previous is None or not policy.has("mask"):
        return None
    session = run.session
    done = mask_old_results(session.history, session.context.updates, session.deleted_range,
                            policy.options, ts, previous.total, session.context.results)
    if done is None:
        return None
    session.context_changed(session.deleted_range, truncated=False)
    return done


def mask_action(done: Masked) -> ContextAction:
    """A masking as a context action on the request's record."""
    return ContextAction(layer="mask", tokens_removed=done.tokens_removed, detail=done.detail)


def reread_after(done: Masked | None, before: Reread | None, deleted_range: RangeLike,
                 truncated: bool) -> Reread | None:
    """The :class:`Reread` of this attempt: a new masking's, else the one an earlier attempt of
    the request made (a retry sends the same masked prompt); None once truncation changed the
    prompt (then everything after the first pair is new)."""
    if truncated:
        return None
    if done is not None:
        return Reread(done.first_message, normalize_range(deleted_range))
    return before


def with_less(previous: RequestUsage | None, tokens: int) -> RequestUsage | None:
    """The previous request's figures as if the cleared tokens had not been sent (truncation then
    judges the context masking left, not the one it replaced)."""
    if previous is None:
        return None
    left = max(previous.input_tokens + previous.cache_read_input_tokens + previous.cache_creation_input_tokens
               - tokens, 0)
    return RequestUsage(previous.ts, left, previous.output_tokens)


def truncate_action(event: ContextTruncated) -> ContextAction:
    """A truncation as a context action (its tokens are known only after the request)."""
    what = "file reads de-duplicated" if event.deleted_range is None else f"kept {event.keep}"
    return ContextAction(layer="truncate", tokens_removed=0, detail=f"{event.reason}: {what}")


def fit_context(run: RequestRun, previous: RequestUsage | None, ts: int) -> tuple[ContextResult, ContextTruncated | None]:
    """Step 1: the request the model sees, and the event to show if the context manager changed it.

    Updates made now are recorded at this request's timestamp, so a rollback to the end of an
    earlier turn (whose mark is older) undoes them.
    """
    session = run.session
    usage = None if previous is None else previous.at(ts)
    ctx = session.context.get_new_context_messages_and_metadata(
        session.history, session.deleted_range, usage, context_window=run.context_window)
    if not (ctx.updated_deleted_range or ctx.file_read_saving is not None):
        return ctx, None
    changed_range = ctx.deleted_range != session.deleted_range
    shown = changed_range or ctx.file_read_saving is not None
    before = session.previous_usage.total if session.previous_usage else 0
    session.context_changed(ctx.deleted_range, truncated=shown)
    event = truncation_event(run, ctx.deleted_range, ctx.keep, "threshold", before, ctx.file_read_saving)
    return ctx, event if shown else None


def truncation_event(run: RequestRun, deleted_range: tuple[int, int] | None, keep: Keep | None,
                     reason: Literal["threshold", "overflow"],
                     previous_tokens: int, file_read_saving: float | None = None) -> ContextTruncated:
    """The one place a :class:`ContextTruncated` event is built."""
    return ContextTruncated(
        deleted_range=deleted_range, keep=keep, previous_tokens=previous_tokens,
        max_allowed=get_context_window_info(run.context_window).max_allowed_size,
        file_read_saving=file_read_saving, reason=reason)


def recover_overflow(run: RequestRun, messages_sent: int, ts: int) -> ContextTruncated | None:
    """Step 3: hide three quarters of what follows the range and say so, or None when the
    conversation cannot be shortened further."""
    session = run.session
    new_range = get_next_truncation_range(session.history, session.deleted_range, "quarter")
    hidden_end = session.deleted_range[1] if session.deleted_range else 1
    # Shortening must hide more than now; otherwise the retry would fail the same way.
    if messages_sent <= 3 or new_range[1] <= hidden_end:
        return None
    result = session.context.truncate_for_overflow(session.history, session.deleted_range, ts)
    before = session.previous_usage.total if session.previous_usage else 0
    session.context_changed(result.deleted_range, truncated=True)
    return truncation_event(run, result.deleted_range, "quarter", "overflow", before)


def model_request(config: SessionConfig, model: str, messages: list[Message], system: str,
                  tools: list[JSONObject], without: frozenset[str] = frozenset(),
                  cache_anchors: tuple[int, ...] = (),
                  on_rate_limits: Callable[[RateLimitSnapshot], None] | None = None,
                  images: tuple[int, int] | None = None) -> ModelRequest:
    """The provider-neutral request, its thinking/effort/server tools taken from the model table
    (lenient: a fallback model was not the one the settings were checked against), leaving out
    the features the endpoint refused (``without``), with the mask layer's ``cache_anchors``
    (:func:`mask_anchors`), and the pacer's ``on_rate_limits`` for the headers at the response's head.
    ``images``: how many images ``messages`` hold and their base64 characters, where known (the
    token counter's, counted with the request's estimate for new messages only)."""
    params = lenient_reasoning_params(model, config.thinking_budget, config.effort, config.prices)
    server_tools = () if "server_tools" in without else server_tool_definitions(config.server_tools)
    count, chars = images if images is not None else (None, None)
    messages = within_many_image_limit(messages, count)  # past 20 images, the API's 2,000 px a side
    messages = within_request_size(messages, chars)  # images adding up past the API's 32 MB a request
    return ModelRequest(model=model, messages=messages, system=system, tools=tools, max_tokens=config.max_tokens,
                        thinking=None if "thinking" in without else params.thinking,
                        effort=None if "effort" in without else params.effort,
                        server_tools=server_tools, timeout_s=config.request_timeout_s, without=without,
                        context_management=None if "context_management" in without else server_edits(config, model),
                        cache_anchors=() if without & {"cache_control", "cache_ttl"} else cache_anchors,
                        on_rate_limits=on_rate_limits)


def mask_anchors(config: SessionConfig, history: Sequence[Message], updates: ContextHistoryUpdates,
                 deleted_range: RangeLike, sent: int, reread: Reread | None,
                 index: ResultIndex | None = None) -> tuple[int, ...]:
    """Where the mask layer wants one-hour cache breakpoints in a request of ``sent`` messages:
    before where the next masking will start (:func:`~nbagent.engine.context.mask.next_masking_start`),
    and after a masking before where it started (``reread``); empty without the layer."""
    policy = ContextPolicy.parse(config.context)
    if not policy.has("mask"):
        return ()
    start = next_masking_start(history, updates, deleted_range, policy.options, index)
    anchors = {None if start is None else sent_position(start, deleted_range) - 1,
               None if reread is None else reread.position(deleted_range)}
    return tuple(sorted(a for a in anchors if a is not None and anchorable(a, sent)))[-MAX_ANCHORS:]


def left_out_tokens(run: RequestRun, messages: list[Message], request: ModelRequest) -> int:
    """Where images were left out of ``messages`` (past 20, or 32 MB), the estimate of the lines
    sent in their place less that of the images (0, at no cost, when nothing was left out)."""
    if request.messages is messages:
        return 0
    return sum(run.counter.count_message(b) - run.counter.count_message(a)
               for a, b in zip(messages, request.messages, strict=True) if a is not b)


def fit_attempt(run: RequestRun, attempts: _Attempts, previous: RequestUsage | None,
                 ts: int) -> tuple[ContextResult, ContextTruncated | None]:
    """Masking, then fitting: what this attempt sends, each layer that acted kept among its actions.

    ``previous`` (the last request's size) is given to the first attempt only: a retry must not
    truncate again on the same stale figures.
    """
    masked = mask_context(run, previous, ts)
    if masked is not None:
        attempts.actions.append(mask_action(masked))
        previous = with_less(previous, masked.tokens_removed)
    ctx, truncated = fit_context(run, previous, ts)
    attempts.reread = reread_after(masked, attempts.reread, run.session.deleted_range, truncated is not None)
    if truncated is not None:
        attempts.truncation = truncated
        attempts.actions.append(truncate_action(truncated))
    return ctx, truncated
