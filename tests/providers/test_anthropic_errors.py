"""``to_api_error``: the SDK's and httpx2's exceptions as the engine's ``ApiError`` (the table of the
api-request spec), built from exceptions constructed the way the SDK constructs them."""

from __future__ import annotations

import datetime as dt
from email.utils import format_datetime
from typing import Any

import anthropic
import httpx2
import pytest

from nbagent.engine.contracts.errors import (
    ApiError,
    ContextOverflowError,
    ErrorKind,
    MissingApiKeyError,
)
from nbagent.providers.anthropic_errors import to_api_error

REQUEST = httpx2.Request("POST", "https://api.anthropic.com/v1/messages")


def status_error(status: int, etype: str | None, message: str = "boom", headers: dict[str, str] | None = None,
                 cls: type[anthropic.APIStatusError] = anthropic.APIStatusError) -> anthropic.APIStatusError:
    body: dict[str, Any] = {"type": "error", "error": {"type": etype, "message": message}} if etype else {}
    response = httpx2.Response(status, headers=headers or {}, request=REQUEST)
    return cls(f"Error code: {status} - {body}", response=response, body=body)


@pytest.mark.parametrize(
    ("status", "etype", "message", "kind"),
    [
        (400, "invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum", ErrorKind.CONTEXT_WINDOW_EXCEEDED),
        (400, "invalid_request_error", "input length and max_tokens exceed context length", ErrorKind.CONTEXT_WINDOW_EXCEEDED),
        (413, "request_too_large", "Request exceeds the maximum allowed number of bytes.", ErrorKind.CONTEXT_WINDOW_EXCEEDED),
        (400, "invalid_request_error", "text content blocks must be non-empty", ErrorKind.INVALID_REQUEST),
        (422, "invalid_request_error", "unprocessable", ErrorKind.INVALID_REQUEST),
        (400, "invalid_request_error", "Your workspace has reached its spend limit.", ErrorKind.SPEND_LIMIT),
        (429, "rate_limit_error", "You have reached your specified spending_limit", ErrorKind.SPEND_LIMIT),
        (401, "authentication_error", "invalid x-api-key", ErrorKind.AUTH),
        (403, "permission_error", "no access", ErrorKind.AUTH),
        (402, "billing_error", "pay up", ErrorKind.BILLING),
        (400, "invalid_request_error", "Your credit balance is too low to access the Anthropic API.", ErrorKind.BILLING),
        (404, "not_found_error", "model: claude-nope", ErrorKind.NOT_FOUND),
        (429, "rate_limit_error", "slow down", ErrorKind.RATE_LIMIT),
        (529, "overloaded_error", "Overloaded", ErrorKind.OVERLOADED),
        (500, "api_error", "Internal server error", ErrorKind.SERVER),
        (502, None, "bad gateway", ErrorKind.SERVER),
        (503, None, "unavailable", ErrorKind.SERVER),
        # An SSE `error` frame: the SDK raises APIStatusError with the stream's 200; the body decides.
        (200, "overloaded_error", "Overloaded", ErrorKind.OVERLOADED),
        (200, "api_error", "Internal server error", ErrorKind.SERVER),
        (200, "something_new", "?", ErrorKind.UNKNOWN),
    ],
)
def test_status_errors_follow_the_spec_table(status: int, etype: str | None, message: str, kind: ErrorKind) -> None:
    err = status_error(status, etype, message)
    mapped = to_api_error(err)
    assert isinstance(mapped, ApiError)
    assert (mapped.kind, mapped.status) == (kind, status)
    if etype:
        assert mapped.message == message  # the API's own message, not the SDK's "Error code: ..." line


def test_message_is_one_line() -> None:
    assert to_api_error(status_error(500, "api_error", "first line\nsecond line")).message == "first line"
    assert to_api_error(ValueError("")).message == "ValueError"


@pytest.mark.parametrize(
    ("exc", "kind"),
    [
        (anthropic.APITimeoutError(REQUEST), ErrorKind.TIMEOUT),
        (anthropic.APIConnectionError(request=REQUEST), ErrorKind.CONNECTION),
        # A dropped stream: the SDK does not wrap the transport's error.
        (httpx2.ReadError("connection dropped", request=REQUEST), ErrorKind.CONNECTION),
        (httpx2.RemoteProtocolError("peer closed connection without sending complete message body"),
         ErrorKind.CONNECTION),
        (httpx2.ConnectError("refused"), ErrorKind.CONNECTION),
        (httpx2.ReadTimeout("slow"), ErrorKind.TIMEOUT),
        (TimeoutError(), ErrorKind.TIMEOUT),
        (anthropic.CredentialsError("no credentials"), ErrorKind.AUTH),
        (MissingApiKeyError(), ErrorKind.AUTH),
        (ContextOverflowError("the model's context window was exceeded"), ErrorKind.CONTEXT_WINDOW_EXCEEDED),
        (ValueError("something else"), ErrorKind.UNKNOWN),
    ],
)
def test_transport_and_other_errors(exc: BaseException, kind: ErrorKind) -> None:
    mapped = to_api_error(exc)
    assert mapped.kind is kind
    assert mapped.status is None and mapped.retry_after_s is None and mapped.request_id is None
    assert "\n" not in mapped.message and mapped.message


def test_an_api_error_passes_through() -> None:
    err = ApiError(ErrorKind.OVERLOADED, "busy", status=529, retry_after_s=1.0, request_id="req_1")
    assert to_api_error(err) is err


def test_request_id_comes_from_the_header_or_the_body() -> None:
    assert to_api_error(status_error(429, "rate_limit_error", headers={"request-id": "req_hdr"})).request_id == "req_hdr"
    err = status_error(529, "overloaded_error")
    assert isinstance(err.body, dict)
    err.body = {**err.body, "request_id": "req_body"}
    assert to_api_error(err).request_id == "req_body"


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"retry-after": "7"}, 7.0),
        ({"retry-after": "2.5"}, 2.5),
        ({"retry-after-ms": "1500"}, 1.5),
        ({"retry-after-ms": "1500", "retry-after": "30"}, 1.5),  # the ms header wins
        ({"retry-after-ms": "soon", "retry-after": "3"}, 3.0),  # an unreadable ms header is ignored
        ({"retry-after": "-4"}, 0.0),
        ({"retry-after": "nan"}, None),
        ({"retry-after": "whenever"}, None),
        ({}, None),
    ],
)
def test_retry_after(headers: dict[str, str], expected: float | None) -> None:
    assert to_api_error(status_error(429, "rate_limit_error", headers=headers)).retry_after_s == expected


def test_retry_after_in_http_date_form() -> None:
    when = dt.datetime.now(dt.timezone.utc) + dt.timedelta(seconds=30)
    got = to_api_error(status_error(429, "rate_limit_error", headers={"retry-after": format_datetime(when, usegmt=True)}))
    assert got.retry_after_s is not None and 25.0 <= got.retry_after_s <= 30.0
    past = format_datetime(dt.datetime(2001, 1, 1, tzinfo=dt.timezone.utc), usegmt=True)
    assert to_api_error(status_error(429, "rate_limit_error", headers={"retry-after": past})).retry_after_s == 0.0


def test_sdk_subclasses_keep_their_kind() -> None:
    assert to_api_error(status_error(529, "overloaded_error", cls=anthropic.OverloadedError)).kind is ErrorKind.OVERLOADED
    assert to_api_error(status_error(429, "rate_limit_error", cls=anthropic.RateLimitError)).kind is ErrorKind.RATE_LIMIT
    assert to_api_error(status_error(404, "not_found_error", cls=anthropic.NotFoundError)).kind is ErrorKind.NOT_FOUND


def test_an_html_error_page_becomes_one_readable_line_with_status_and_request_id() -> None:
    page = ("<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title></head>"
            "<body><h1>Bad Gateway</h1><p>nginx</p></body></html>")
    request = httpx2.Request("POST", "https://api.anthropic.com/v1/messages")
    response = httpx2.Response(502, request=request, text=page, headers={"request-id": "req_html_1"})
    error = to_api_error(anthropic.AsyncAnthropic(api_key="x")._make_status_error_from_response(response))
    assert error.message == "HTTP 502 answered with an HTML page, not an API error: 502 Bad Gateway"
    assert error.status == 502 and error.request_id == "req_html_1" and error.kind.value == "server"


def test_a_huge_plain_text_body_is_cut_to_one_short_line() -> None:
    request = httpx2.Request("POST", "https://api.anthropic.com/v1/messages")
    response = httpx2.Response(500, request=request, text="x" * 5000 + "\nsecond line")
    error = to_api_error(anthropic.AsyncAnthropic(api_key="x")._make_status_error_from_response(response))
    assert len(error.message) <= 300 and "\n" not in error.message


@pytest.mark.parametrize(("text", "message"), [
    ('{"message":"not with these credentials"}', "HTTP 403: not with these credentials"),  # Bedrock's gateway
    ('{"detail":"forbidden"}', 'HTTP 403: {"detail":"forbidden"}'),
    ("", "HTTP 403 with no body"),
])
def test_an_error_without_the_apis_message_reads_the_same_whatever_the_sdks_wording(text: str, message: str) -> None:
    response = httpx2.Response(403, request=REQUEST, text=text, headers={"request-id": "req_1"})
    built = anthropic.AsyncAnthropic(api_key="x")._make_status_error_from_response(response)
    # The SDK's own message for the same response: "Error code: 403 - {...}" until 2.16, "403 {...} (...)" since.
    for sdk_wording in (str(built), f"Error code: 403 - {built.body}", "403 {} (request_id: req_1)"):
        error = to_api_error(anthropic.PermissionDeniedError(sdk_wording, response=response, body=built.body))
        assert (error.message, error.kind, error.request_id) == (message, ErrorKind.AUTH, "req_1")


@pytest.mark.parametrize(("text", "said"), [
    ('{"detail":"Not Found"}', 'HTTP 404: {"detail":"Not Found"}'),  # an OpenAI-compatible server
    ("<html><head><title>404 Not Found</title></head></html>", "HTTP 404 answered with an HTML page"),
])
def test_a_404_that_is_not_the_apis_own_names_the_url_and_the_likely_cause(text: str, said: str) -> None:
    # It read only 'HTTP 404: {"detail":"Not Found"}': no path, no hint that the server is not a Messages API.
    request = httpx2.Request("POST", "http://127.0.0.1:8000/v1/v1/messages?beta=true")
    response = httpx2.Response(404, request=request, text=text)
    error = to_api_error(anthropic.AsyncAnthropic(api_key="x")._make_status_error_from_response(response))
    assert error.message.index(said) < error.message.index("(POST http://127.0.0.1:8000/v1/v1/messages: is base_url")
    assert "OpenAI-compatible" in error.message and "beta=true" not in error.message
    assert error.kind == ErrorKind.NOT_FOUND


def test_a_cloud_404_keeps_its_own_words_whole_and_a_key_in_the_path_is_not_shown() -> None:
    # Bedrock's "model not enabled" 404 was cut at 300 characters behind a hint about a base_url the
    # user never set; a gateway's key in the path was printed (the review of pow3's hint).
    reason = "Could not resolve the foundation model from the provided model identifier. " * 3
    request = httpx2.Request("POST", "https://bedrock-runtime.us-east-1.amazonaws.com/model/x/invoke-with-response-stream")
    bedrock = httpx2.Response(404, request=request, json={"message": reason.strip()})
    error = to_api_error(anthropic.AsyncAnthropic(api_key="x")._make_status_error_from_response(bedrock))
    assert "base_url" not in error.message and "Could not resolve the foundation model" in error.message
    keyed = httpx2.Request("POST", "http://gw.local/k/Zq8wT3kLmN0pR7sV2xY5aB9c/v1/messages")
    error = to_api_error(anthropic.AsyncAnthropic(api_key="x")._make_status_error_from_response(
        httpx2.Response(404, request=keyed, text='{"detail":"Not Found"}')))
    assert "Zq8wT3kLmN0pR7sV2xY5aB9c" not in error.message and "http://gw.local/k/…/v1/messages" in error.message


def test_the_apis_own_not_found_keeps_its_message() -> None:
    assert to_api_error(status_error(404, "not_found_error", "model: qwen3")).message == "model: qwen3"
