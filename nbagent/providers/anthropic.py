"""The Anthropic provider: the real ``anthropic`` SDK, pointed at the API or at the simulated one.

SDK stream events become engine chunks in :mod:`.anthropic_stream`, and every SDK or
transport failure leaves :meth:`AnthropicProvider.stream` as the engine's ``ApiError`` (mapped by
:mod:`.anthropic_errors`). The SDK's own retries are off (``max_retries=0``): nbagent retries
visibly. Each event loop gets its own ``AsyncAnthropic`` client (a client's connection pool belongs
to the loop it was used on). The API key is read from the config or the environment and is never
printed, logged, saved or shown.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import importlib
import os
import threading
import time
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any, Protocol

import anthropic
import httpx2

from ..engine.contracts.errors import ApiError, ErrorKind
from ..engine.contracts.messages import CompactionScan
from ..engine.contracts.provider import Chunk, ModelRequest
from .anthropic_errors import bound_error_body, refused_feature, to_api_error
from .anthropic_request import features_sent, request_kwargs
from .anthropic_stream import StreamAssembler, read_to_end
from .endpoints import Endpoint
from .rate_headers import rate_limits_of
from .rate_scope import rate_scope

API_KEY_ENV = "ANTHROPIC_API_KEY"
SIMULATED_NOTICE = (
    "No ANTHROPIC_API_KEY is set, so nbagent is using its offline simulated model: replies come "
    "from a small rule set, not from Claude, and cost figures are what the real API would charge. "
    "Set ANTHROPIC_API_KEY (or pass --anthropic with a key) to use Claude."
)

if TYPE_CHECKING:
    from .simulated import SimulatedAPI

ClientFactory = Callable[[], anthropic.AsyncAnthropic]


class _Closable(Protocol):
    async def close(self) -> None: ...


def api_key_from_env() -> str | None:
    """The configured key, if any (never log or display the return value)."""
    key = os.environ.get(API_KEY_ENV, "").strip()
    return key or None


class AnthropicProvider:
    """Streams replies through ``AsyncAnthropic`` clients made by ``client_factory``, one per event loop.

    ``name`` is ``"anthropic"`` for the real API and ``"simulated"`` for the offline app. A client
    is never shared across event loops: its pooled connections are bound to the loop that opened
    them, and each ``Agent.run_sync`` runs on a new loop.
    """

    def __init__(self, client_factory: ClientFactory, name: str = "anthropic") -> None:
        if isinstance(client_factory, anthropic.AsyncAnthropic) or not callable(client_factory):
            raise TypeError("AnthropicProvider takes a factory of AsyncAnthropic clients (one is made per event loop)")
        self._client_factory = client_factory
        self._clients: dict[asyncio.AbstractEventLoop, tuple[anthropic.AsyncAnthropic, AsyncIterator[None]]] = {}
        self._lock = threading.Lock()
        self._last: tuple[asyncio.AbstractEventLoop, anthropic.AsyncAnthropic] | None = None  # the latest one used
        self.name = name
        self._compaction = CompactionScan()  # the beta header's scan, per request only the new messages
        self.endpoint: Endpoint | None = None
        """The endpoint this provider talks to, when it was made from one (see :func:`endpoint_provider`)."""
        self.rate_scope: str | None = None
        """Names the key's shared rate limit (:mod:`.rate_scope`); None: this process paces alone."""

    def __repr__(self) -> str:  # a client's or factory's repr could carry a key: never show it
        return f"AnthropicProvider(name={self.name!r})"

    async def client(self) -> anthropic.AsyncAnthropic:
        """The client of the running event loop, made on its first use there.

        The client is closed on its own loop when that loop shuts down (``asyncio.run`` and
        ``asyncio.Runner`` close async generators, and one is tied to the client); clients of
        closed loops are dropped, since their connections can never be used again."""
        loop = asyncio.get_running_loop()
        last = self._last
        if last is not None and last[0] is loop:  # every request of a run: no lock, no sweep
            return last[1]
        with self._lock:
            for old in [lp for lp in self._clients if lp.is_closed()]:
                del self._clients[old]
            entry = self._clients.get(loop)
            if entry is not None:
                self._last = (loop, entry[0])
                return entry[0]
            client = self._client_factory()
            _bound_error_bodies(client)
            closer = _closed_at_loop_shutdown(client)
            self._clients[loop] = (client, closer)
        await closer.__anext__()
        self._last = (loop, client)  # now the loop knows the generator and will close it at shutdown
        return client

    async def stream(self, request: ModelRequest) -> AsyncIterator[Chunk]:
        """Yield engine deltas, then one :class:`MessageComplete`.

        Every failure, opening the stream or during it, is raised as an ``ApiError`` (chained from
        the SDK's error); cancellation and ``GeneratorExit`` pass through untouched."""
        kwargs = request_kwargs(request, self._compaction)
        endpoint = self.endpoint
        if endpoint is not None and endpoint.model_ids:  # the id the endpoint knows the model by
            kwargs["model"] = endpoint.model_ids.get(request.model, request.model)
        try:
            client = await self.client()
            # Server-side context management and compaction blocks are beta: their requests go
            # through the beta resource, which sends the ``anthropic-beta`` header and parses replies
            # with the beta types (compaction blocks and deltas, ``applied_edits``).
            # Any: the SDK's overloaded create() is typed per literal argument, and the body is built.
            messages: Any = client.beta.messages if "betas" in kwargs else client.messages
            raw = await messages.create(**kwargs)
        except Exception as exc:
            error = _mapped(exc)
            error.rejected = refused_feature(error, features_sent(kwargs, request))
            raise error from exc
        assembler = StreamAssembler(request.model, request.max_tokens)
        events = aiter(raw)
        try:
            # Read when the response's head arrives: its reset times count from there, not from the end
            # of a long stream (a rate measured from the end came out too fast by the stream's length).
            limits, head_at = rate_limits_of(getattr(raw, "response", None)), time.monotonic()
            _check_event_stream(getattr(raw, "response", None), request.model)
            if limits is not None and request.on_rate_limits is not None:
                request.on_rate_limits(limits)  # the machine's other kernels need not wait for the stream's end
            async for event in events:  # translated here, not in a nested generator: one layer less per delta
                chunk = assembler.feed(event)
                if chunk is not None:
                    yield chunk
                elif assembler.stopped:
                    # message_stop ends the message; what follows is normally only the stream's end.
                    await read_to_end(events)
                    break
            complete = assembler.complete()
            if limits is not None:
                limits = dataclasses.replace(limits, age_s=time.monotonic() - head_at)
            yield complete if limits is None else dataclasses.replace(complete, rate_limits=limits)
        except ApiError:
            raise
        except Exception as exc:
            raise _mapped(exc) from exc
        finally:
            await _close(raw)

    async def model_window(self, model: str) -> int | None:
        """The context window the endpoint reports for ``model`` (``GET /v1/models/{id}``'s
        ``max_input_tokens``, as the LiteLLM proxy serves it), or None when it cannot tell."""
        try:
            info = await (await self.client()).models.retrieve(model)
        except Exception:  # noqa: BLE001 - an endpoint without the models API simply cannot tell
            return None
        window = getattr(info, "max_input_tokens", None)
        return window if isinstance(window, int) and not isinstance(window, bool) and window > 0 else None


def _check_event_stream(response: object, model: str) -> None:
    """Raise when a 2xx response is a whole JSON reply (a server that ignores ``stream``): read as a
    stream cut short, it was a connection error retried three times, where no retry can help. Any
    other type is read as it comes: servers stream events under ``text/html`` (Flask's default),
    ``text/plain`` or none, and Bedrock under its own ``application/vnd.amazon.eventstream``."""
    headers = getattr(response, "headers", None)
    kind = headers.get("content-type") if headers is not None else None
    if not isinstance(kind, str) or kind.split(";")[0].strip().lower() != "application/json":
        return
    url = str(getattr(getattr(response, "request", None), "url", "the endpoint")).split("?")[0].rsplit("@", 1)[-1]
    raise ApiError(ErrorKind.INVALID_REQUEST,
                   f"{url} answered {kind.split(';')[0]}, not a stream of events (text/event-stream): is "
                   f"base_url a server of the Anthropic Messages API that streams ({model!r})?",
                   status=getattr(response, "status_code", None))


async def _closed_at_loop_shutdown(client: anthropic.AsyncAnthropic) -> AsyncIterator[None]:
    """Suspended for the loop's lifetime; its ``finally`` closes the client's connections on that loop
    (left to garbage collection, the SDK would try to close them on whatever loop runs then)."""
    try:
        yield  # never resumed: only closed
    finally:
        await client.close()


def _bound_error_bodies(client: anthropic.AsyncAnthropic) -> None:
    """Install :func:`bound_error_body` on the client's ``httpx2`` client (the SDK keeps it as
    ``_client``; any factory's client, the simulated one's too, gets it)."""
    http = getattr(client, "_client", None)
    if isinstance(http, httpx2.AsyncClient) and bound_error_body not in http.event_hooks["response"]:
        http.event_hooks["response"].append(bound_error_body)


def _mapped(exc: Exception) -> ApiError:
    error = to_api_error(exc)
    if error.rate_limits is None:  # a 429 (or any answered error) states what remains too
        error.rate_limits = rate_limits_of(getattr(exc, "response", None), error.retry_after_s)
    return error


async def _close(raw: _Closable) -> None:
    """Close the response. The stream's outcome is already decided (a complete message or an
    error that is being raised), so a failure while closing is not reported."""
    with contextlib.suppress(Exception):
        await raw.close()


def no_redirects() -> httpx2.AsyncClient:
    """The SDK's own transport, but never following a redirect.

    The SDK follows redirects by default, and httpx drops only ``Authorization`` when one leads to
    another host: an endpoint's other headers (treated as secrets: a gateway's ``x-api-key``, a
    cookie) and the whole conversation went wherever a ``Location`` pointed, past the trust a
    project file's ``base_url`` needs. The Messages API never redirects; a 3xx is an error that
    names its status."""
    return anthropic.DefaultAsyncHttpxClient(follow_redirects=False)


def anthropic_provider(api_key: str, *, base_url: str | None = None, timeout_s: float = 600.0) -> AnthropicProvider:
    """A provider for the real API (``max_retries=0``; nbagent owns retries), one client per event loop."""

    def new_client() -> anthropic.AsyncAnthropic:  # a closure: the key is in no repr
        return anthropic.AsyncAnthropic(api_key=str(api_key), base_url=base_url, max_retries=0, timeout=timeout_s,
                                        http_client=no_redirects())

    provider = AnthropicProvider(new_client, name="anthropic")
    provider.rate_scope = rate_scope(base_url, api_key)
    return provider


AWS_MODULES = ("boto3", "botocore.auth", "botocore.awsrequest", "botocore.credentials", "botocore.httpsession",
               "botocore.session", "botocore.eventstream", "botocore.parsers", "botocore.loaders", "botocore.model")
"""What the SDK's Bedrock client imports as it signs its first request and reads the stream."""


def _aws_sdk_imported(signs: bool) -> None:
    """Import :data:`AWS_MODULES` now, never from the notebook's folder. The SDK imports them as it
    signs the first request, on a worker thread nbagent does not mark, and botocore and urllib3 try
    optional modules the install may lack (``awscrt``, ``OpenSSL``, ``brotli``): a received folder's
    ``awscrt.py`` ran on a Bedrock user's first prompt there (review of attacker pass 19).

    Where boto3 itself is missing (it is the SDK's ``bedrock`` extra, not nbagent's) and the client
    ``signs`` with AWS credentials, the SDK would import it there too, and a received folder's
    ``botocore.py`` ran (second review of attacker pass 19): an :class:`ImportError` here instead."""
    from ..engine.disk.own_imports import installed_only

    with installed_only():
        for name in AWS_MODULES:
            try:
                importlib.import_module(name)
            except ImportError as error:
                if signs and name == AWS_MODULES[0]:
                    raise ImportError("a Bedrock endpoint without an api_key signs requests with AWS credentials, "
                                      "which needs boto3: pip install 'anthropic[bedrock]' "
                                      f"({error})", name=error.name) from None
                return


_AUTH_HEADERS = ("Authorization", "X-Api-Key")


def _named_headers_only(endpoint: Endpoint, *, keyless: bool) -> dict[str, Any]:
    """The default headers of an endpoint that gets only the credentials it names (a project file's
    profile for a host of its own): its own headers, and none of ``ANTHROPIC_CUSTOM_HEADERS`` (where
    a gateway's key may be kept, which the SDK adds to every request); for a ``keyless`` one no auth
    header either (its client gets an explicit empty key, so the SDK reads none from the environment
    or its profiles: ``ANTHROPIC_API_KEY`` went to whatever host the file named and you trusted)."""
    named = {name.lower() for name in endpoint.headers}
    env_lines = os.environ.get("ANTHROPIC_CUSTOM_HEADERS", "").split("\n")
    dropped = [line.split(":", 1)[0].strip() for line in env_lines if ":" in line]
    dropped += list(_AUTH_HEADERS) if keyless else []
    omitted = {name: anthropic.Omit() for name in dropped if name and name.lower() not in named}
    return {**omitted, **dict(endpoint.headers)}


def endpoint_provider(endpoint: Endpoint, *, timeout_s: float = 600.0,
                      http_client: Callable[[], httpx2.AsyncClient] | None = None) -> AnthropicProvider:
    """A provider for ``endpoint`` (its base URL, key or bearer token, headers and timeout; for
    Bedrock and Vertex the SDK's own clients), named after it; one client per event loop.
    ``http_client`` makes the transport (tests, proxies)."""

    def new_client() -> anthropic.AsyncAnthropic:  # a closure: the secrets are in no repr
        common: dict[str, Any] = dict(
            base_url=endpoint.base_url, max_retries=0, timeout=endpoint.timeout_s or timeout_s,
            default_headers=dict(endpoint.headers) or None, http_client=http_client() if http_client else no_redirects())
        keyless = endpoint.kind == "anthropic" and not (endpoint.api_key or endpoint.auth_token)
        if endpoint.named_credentials_only:
            common["default_headers"] = _named_headers_only(endpoint, keyless=keyless)
        if endpoint.kind == "bedrock":  # SigV4 from AWS's credential chain (env, profile, role)
            _aws_sdk_imported(signs=not endpoint.api_key)
            return anthropic.AsyncAnthropicBedrock(  # type: ignore[return-value]
                aws_region=endpoint.region, api_key=endpoint.api_key, **common)
        if endpoint.kind == "vertex":  # a bearer token, else Google's application-default credentials
            return anthropic.AsyncAnthropicVertex(  # type: ignore[return-value]
                region=str(endpoint.region), project_id=str(endpoint.project_id), access_token=endpoint.auth_token,
                **common)
        if endpoint.named_credentials_only and keyless:
            return anthropic.AsyncAnthropic(api_key="", **common)
        return anthropic.AsyncAnthropic(api_key=endpoint.api_key, auth_token=endpoint.auth_token, **common)

    provider = AnthropicProvider(new_client, name=endpoint.name)
    provider.endpoint = endpoint
    if endpoint.kind not in ("bedrock", "vertex"):  # (the clouds' limits are the cloud account's)
        provider.rate_scope = rate_scope(endpoint.base_url, endpoint.api_key or endpoint.auth_token)
    return provider


def simulated_provider(api: SimulatedAPI | None = None, **sim_options: Any) -> AnthropicProvider:
    """A provider whose SDK client talks to the in-process simulated Messages API.

    ``api`` is a :class:`nbagent.providers.simulated.SimulatedAPI` (a new one with the demo brain
    when omitted). The provider keeps it as ``.api`` for request logs and fault injection; its
    clients come from ``api.async_client`` (a new one per event loop, as for the real API).
    """
    from .simulated import SimulatedAPI

    api = api if api is not None else SimulatedAPI(**sim_options)
    provider = AnthropicProvider(api.async_client, name="simulated")  # a new client per event loop
    provider.api = api  # type: ignore[attr-defined]
    return provider
