"""Every injected fault raises what the real API would make the real SDK raise, and
the provider's ``to_api_error`` gives the kind of the api-request spec table."""

from __future__ import annotations

import json
import re
from typing import Any

import anthropic
import httpx2
import pytest
from anthropic.types import MessageParam

from nbagent.engine.contracts.errors import ErrorKind
from nbagent.providers.anthropic_errors import to_api_error
from nbagent.providers.simulated import (
    ALL_FAULTS,
    Fault,
    FaultSchedule,
    SimulatedAPI,
    text_reply,
    tool_reply,
)

from ._sdk import text_of, transport_error

MODEL = "claude-sonnet-5-5"
USER: list[MessageParam] = [{"role": "user", "content": "hi"}]
REPLY = tool_reply("python", {"code": "print(sum(range(10)))  # a tool call long enough to cut"},
                   text="Let me run a little code for you now.")

# fault name -> (exception class raised while streaming, kind from to_api_error)
EXPECTED: dict[str, tuple[type[BaseException], ErrorKind]] = {
    "rate_limit": (anthropic.RateLimitError, ErrorKind.RATE_LIMIT),
    "overloaded": (anthropic.OverloadedError, ErrorKind.OVERLOADED),
    "server_error": (anthropic.InternalServerError, ErrorKind.SERVER),
    "unavailable": (anthropic.ServiceUnavailableError, ErrorKind.SERVER),
    "auth": (anthropic.AuthenticationError, ErrorKind.AUTH),
    "billing": (anthropic.PaymentRequiredError, ErrorKind.BILLING),
    "permission": (anthropic.PermissionDeniedError, ErrorKind.AUTH),
    "not_found": (anthropic.NotFoundError, ErrorKind.NOT_FOUND),
    "prompt_too_long": (anthropic.BadRequestError, ErrorKind.CONTEXT_WINDOW_EXCEEDED),
    "connection_refused": (anthropic.APIConnectionError, ErrorKind.CONNECTION),
    "stall": (anthropic.APITimeoutError, ErrorKind.TIMEOUT),
    # An `event: error` frame inside a 200 stream: the SDK raises the base APIStatusError.
    "sse_error": (anthropic.APIStatusError, ErrorKind.OVERLOADED),
    # A stream that dies mid-way: the raw transport error, or (anthropic >= 2.17) an APIConnectionError it caused.
    "drop": (httpx2.ReadError, ErrorKind.CONNECTION),
    "cut_tool_json": (httpx2.ReadError, ErrorKind.CONNECTION),
}


def test_all_fourteen_faults_are_named() -> None:
    assert set(ALL_FAULTS) == set(EXPECTED) and len(ALL_FAULTS) == 14
    assert all(isinstance(factory(), Fault) for factory in ALL_FAULTS.values())


class Sleeps:
    """An injected sleep that returns at once and remembers what was asked."""

    def __init__(self) -> None:
        self.calls: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)


def faulty(fault: Fault, sleep: Sleeps | None = None) -> tuple[SimulatedAPI, anthropic.AsyncAnthropic]:
    api = SimulatedAPI(lambda request: REPLY, faults={1: fault}, sleep=sleep or Sleeps())
    # A read timeout shorter than the stall, so that the stall becomes a timeout.
    return api, api.async_client(timeout=httpx2.Timeout(2.0))


async def raw_stream(client: anthropic.AsyncAnthropic) -> list[Any]:
    stream = await client.messages.create(model=MODEL, max_tokens=200, messages=USER, stream=True)
    return [event async for event in stream]


async def helper_stream(client: anthropic.AsyncAnthropic) -> Any:
    async with client.messages.stream(model=MODEL, max_tokens=200, messages=USER) as stream:
        return await stream.get_final_message()


@pytest.mark.parametrize("consume", [raw_stream, helper_stream], ids=["create-stream", "messages.stream"])
@pytest.mark.parametrize("name", list(EXPECTED))
async def test_fault_surfaces_as_the_sdk_exception_and_kind(name: str, consume: Any) -> None:
    exc_type, kind = EXPECTED[name]
    api, client = faulty(ALL_FAULTS[name]())
    with pytest.raises(BaseException) as caught:
        await consume(client)
    raised = transport_error(caught.value) if issubclass(exc_type, httpx2.TransportError) else caught.value
    assert type(raised) is exc_type, f"{name}: got {type(raised).__name__}: {caught.value}"
    assert to_api_error(caught.value).kind is kind
    assert api.requests[0].fault is not None and api.requests[0].fault.name == name
    # The fault hit request 1 only: the next request goes through.
    assert (await helper_stream(client)).stop_reason == "tool_use"


async def test_status_errors_carry_body_request_id_and_retry_after() -> None:
    _, client = faulty(Fault.rate_limit(retry_after=7))
    with pytest.raises(anthropic.RateLimitError) as caught:
        await helper_stream(client)
    err = caught.value
    assert err.type == "rate_limit_error" and isinstance(err.body, dict)
    assert err.body["type"] == "error" and err.body["request_id"].startswith("req_sim_")
    mapped = to_api_error(err)
    assert mapped.request_id == err.response.headers["request-id"] == err.body["request_id"]
    assert (mapped.kind, mapped.status, mapped.retry_after_s) == (ErrorKind.RATE_LIMIT, 429, 7.0)


async def test_prompt_too_long_fault_has_the_exact_message_shape() -> None:
    _, client = faulty(Fault.prompt_too_long())
    with pytest.raises(anthropic.BadRequestError) as caught:
        await helper_stream(client)
    assert caught.value.api_message is not None
    match = re.fullmatch(r"prompt is too long: (\d+) tokens > (\d+) maximum", caught.value.api_message)
    assert match and int(match.group(1)) > int(match.group(2)) == 1_000_000


async def test_not_found_names_the_model() -> None:
    _, client = faulty(Fault.not_found())
    with pytest.raises(anthropic.NotFoundError) as caught:
        await helper_stream(client)
    assert caught.value.api_message == f"model: {MODEL}"


async def test_stall_sleeps_only_as_long_as_the_client_waits() -> None:
    sleeps = Sleeps()
    _, client = faulty(Fault.stall(30), sleeps)
    with pytest.raises(anthropic.APITimeoutError):
        await helper_stream(client)
    assert sleeps.calls == [2.0]
    # A stall shorter than the read timeout only delays the answer.
    sleeps = Sleeps()
    _, client = faulty(Fault.stall(1.5), sleeps)
    assert (await helper_stream(client)).stop_reason == "tool_use"
    assert sleeps.calls == [1.5]


async def test_sse_error_frame_arrives_after_n_events_with_the_given_type() -> None:
    _, client = faulty(Fault.sse_error(after_events=4, error_type="api_error"))
    stream = await client.messages.create(model=MODEL, max_tokens=200, messages=USER, stream=True)
    seen = []
    with pytest.raises(anthropic.APIStatusError) as caught:
        async for event in stream:
            seen.append(event.type)
    assert caught.value.status_code == 200 and caught.value.type == "api_error"
    assert to_api_error(caught.value).kind is ErrorKind.SERVER
    assert len(seen) == 3  # four frames went out, one of them a ping the SDK skips


async def test_cut_tool_json_breaks_inside_the_input_fragments() -> None:
    _, client = faulty(Fault.cut_tool_json())
    stream = await client.messages.create(model=MODEL, max_tokens=200, messages=USER, stream=True)
    fragments: list[str] = []
    started: list[str] = []
    stopped: list[int] = []
    with pytest.raises(BaseException) as caught:
        async for event in stream:
            if event.type == "content_block_start":
                started.append(event.content_block.type)
            if event.type == "content_block_delta" and event.delta.type == "input_json_delta":
                fragments.append(event.delta.partial_json)
            if event.type == "content_block_stop":
                stopped.append(event.index)
    assert type(transport_error(caught.value)) is httpx2.ReadError, repr(caught.value)
    # The model's thinking and its text ended; the tool call (block 2) never did.
    assert started == ["thinking", "text", "tool_use"] and stopped == [0, 1]
    assert any(fragments)
    with pytest.raises(ValueError):
        json.loads("".join(fragments))  # what arrived is not a whole JSON document


@pytest.mark.parametrize(
    ("fault", "exc_type", "kind"),
    [
        (Fault.sse_error(), anthropic.OverloadedError, ErrorKind.OVERLOADED),  # no stream: the 529 itself
        (Fault.drop(), anthropic.APIConnectionError, ErrorKind.CONNECTION),  # body read inside the SDK
        (Fault.cut_tool_json(), anthropic.APIConnectionError, ErrorKind.CONNECTION),
    ],
)
async def test_stream_faults_on_a_non_streamed_request(fault: Fault, exc_type: type, kind: ErrorKind) -> None:
    _, client = faulty(fault)
    with pytest.raises(anthropic.APIError) as caught:
        await client.messages.create(model=MODEL, max_tokens=200, messages=USER)
    assert type(caught.value) is exc_type
    assert to_api_error(caught.value).kind is kind


def test_seeded_probability_is_reproducible_and_respects_kinds() -> None:
    schedule = FaultSchedule(probability=0.5, seed=7, kinds=["overloaded", "drop"])
    draws = [schedule.fault_for(n) for n in range(1, 201)]
    again = [FaultSchedule(probability=0.5, seed=7, kinds=["overloaded", "drop"]).fault_for(n) for n in range(1, 201)]
    assert draws == again
    hits = [d for d in draws if d is not None]
    assert 60 < len(hits) < 140
    assert {d.name for d in hits} == {"overloaded", "drop"}
    assert all(FaultSchedule(probability=0.0).fault_for(n) is None for n in range(1, 50))


def test_schedule_parses_the_cli_form_and_rejects_unknown_names() -> None:
    schedule = FaultSchedule.parse("2=rate_limit,5=drop,p=0.25,seed=3,kinds=overloaded+server_error")
    assert schedule.fault_for(2) == Fault.rate_limit()
    assert schedule.fault_for(5) == Fault.drop()
    assert (schedule.probability, schedule.seed, tuple(schedule.kinds)) == (0.25, 3, ("overloaded", "server_error"))
    with pytest.raises(ValueError):
        FaultSchedule.parse("1=gremlins")
    with pytest.raises(ValueError):
        FaultSchedule(by_request={1: "nope"})


async def test_faults_count_every_request_including_count_tokens() -> None:
    api = SimulatedAPI([text_reply("ok")], faults={2: Fault.overloaded()})
    client = api.async_client()
    await client.messages.count_tokens(model=MODEL, messages=USER)
    with pytest.raises(anthropic.OverloadedError):
        await client.messages.create(model=MODEL, max_tokens=10, messages=USER)
    message = await client.messages.create(model=MODEL, max_tokens=10, messages=USER)
    assert [b.type for b in message.content] == ["thinking", "text"] and text_of(message.content[1]) == "ok"
    assert [(r.number, r.path, r.fault.name if r.fault else None) for r in api.requests] == [
        (1, "/v1/messages/count_tokens", None), (2, "/v1/messages", "overloaded"), (3, "/v1/messages", None)]
