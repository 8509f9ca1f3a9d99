"""Injectable faults: the failures a real Messages API produces, on a schedule.

A :class:`Fault` describes *what* goes wrong; a :class:`FaultSchedule` decides *when* (by 1-based
request number, or with a seeded probability). The app turns a fault into the same bytes (or the
same broken connection) the real API would produce, so the real SDK raises its real exception.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from enum import Enum
from typing import Callable, Mapping, Sequence, Union


class FaultKind(str, Enum):
    """How a fault manifests on the wire."""

    HTTP = "http"  # an error status with a JSON error body, before any stream starts
    REFUSED = "refused"  # the connection is never made
    STALL = "stall"  # nothing arrives before the first byte for a while
    SSE_ERROR = "sse_error"  # the stream starts (200) and then carries an `event: error` frame
    DROP = "drop"  # the stream starts and the connection dies after N frames
    CUT_TOOL_JSON = "cut_tool_json"  # the connection dies inside a tool call's input_json_deltas


@dataclass(frozen=True)
class Fault:
    """One injected failure. Build it with the named constructors (``Fault.rate_limit()`` …)."""

    name: str
    kind: FaultKind
    status: int = 0
    error_type: str = ""
    message: str = ""
    retry_after: float | None = None
    seconds: float = 0.0
    after_events: int = 0

    @classmethod
    def rate_limit(cls, retry_after: float = 3) -> Fault:
        """429 ``rate_limit_error`` with a ``retry-after`` header (seconds)."""
        return cls("rate_limit", FaultKind.HTTP, 429, "rate_limit_error",
                   "Number of requests has exceeded your per-minute rate limit (simulated fault).",
                   retry_after=retry_after)

    @classmethod
    def overloaded(cls) -> Fault:
        """529 ``overloaded_error``."""
        return cls("overloaded", FaultKind.HTTP, 529, "overloaded_error", "Overloaded (simulated fault)")

    @classmethod
    def server_error(cls) -> Fault:
        """500 ``api_error``."""
        return cls("server_error", FaultKind.HTTP, 500, "api_error", "Internal server error (simulated fault)")

    @classmethod
    def unavailable(cls) -> Fault:
        """503; the body says ``api_error`` so that it is not mistaken for an overload."""
        return cls("unavailable", FaultKind.HTTP, 503, "api_error", "Service unavailable (simulated fault)")

    @classmethod
    def auth(cls) -> Fault:
        """401 ``authentication_error``."""
        return cls("auth", FaultKind.HTTP, 401, "authentication_error", "invalid x-api-key (simulated fault)")

    @classmethod
    def billing(cls) -> Fault:
        """402 ``billing_error``."""
        return cls("billing", FaultKind.HTTP, 402, "billing_error",
                   "Your credit balance is too low to access the Anthropic API (simulated fault).")

    @classmethod
    def permission(cls) -> Fault:
        """403 ``permission_error``."""
        return cls("permission", FaultKind.HTTP, 403, "permission_error",
                   "Your API key does not have permission to use the specified resource (simulated fault).")

    @classmethod
    def not_found(cls) -> Fault:
        """404 ``not_found_error`` naming the request's model, as for an unknown model id."""
        # The message is completed with the model id by the app ("model: <id>").
        return cls("not_found", FaultKind.HTTP, 404, "not_found_error", "model: ")

    @classmethod
    def prompt_too_long(cls) -> Fault:
        """400 ``invalid_request_error`` ``prompt is too long: N tokens > M maximum``."""
        # N and M are filled in by the app from the request and the window.
        return cls("prompt_too_long", FaultKind.HTTP, 400, "invalid_request_error", "prompt is too long")

    @classmethod
    def connection_refused(cls) -> Fault:
        """The connection fails before a request is sent (``httpx2.ConnectError``)."""
        return cls("connection_refused", FaultKind.REFUSED)

    @classmethod
    def stall(cls, seconds: float = 30.0) -> Fault:
        """No byte for ``seconds``; a client whose read timeout is shorter times out."""
        return cls("stall", FaultKind.STALL, seconds=seconds)

    @classmethod
    def sse_error(cls, after_events: int = 3, error_type: str = "overloaded_error") -> Fault:
        """A 200 stream that sends ``event: error`` after ``after_events`` frames, then ends."""
        message = {"overloaded_error": "Overloaded", "api_error": "Internal server error"}.get(error_type, error_type)
        return cls("sse_error", FaultKind.SSE_ERROR, 200, error_type, f"{message} (simulated fault)",
                   after_events=after_events)

    @classmethod
    def drop(cls, after_events: int = 3) -> Fault:
        """A 200 stream whose connection dies after ``after_events`` frames."""
        return cls("drop", FaultKind.DROP, after_events=after_events)

    @classmethod
    def cut_tool_json(cls) -> Fault:
        """A 200 stream that dies half-way through a tool call's ``input_json_delta`` fragments."""
        return cls("cut_tool_json", FaultKind.CUT_TOOL_JSON)


FaultFactory = Callable[[], Fault]

ALL_FAULTS: Mapping[str, FaultFactory] = {
    "rate_limit": Fault.rate_limit,
    "overloaded": Fault.overloaded,
    "server_error": Fault.server_error,
    "unavailable": Fault.unavailable,
    "auth": Fault.auth,
    "billing": Fault.billing,
    "permission": Fault.permission,
    "not_found": Fault.not_found,
    "prompt_too_long": Fault.prompt_too_long,
    "connection_refused": Fault.connection_refused,
    "stall": Fault.stall,
    "sse_error": Fault.sse_error,
    "drop": Fault.drop,
    "cut_tool_json": Fault.cut_tool_json,
}
"""Every fault by name, as a factory with default arguments."""

# Random faults default to the transient ones an agent is expected to ride out; a random 401 in a
# demo would only look like a broken setup.
TRANSIENT_FAULTS: tuple[str, ...] = (
    "rate_limit", "overloaded", "server_error", "unavailable", "connection_refused", "sse_error", "drop",
)

FaultLike = Union[str, Fault]


def _as_fault(item: FaultLike) -> Fault:
    if isinstance(item, Fault):
        return item
    try:
        return ALL_FAULTS[item]()
    except KeyError:
        raise ValueError(f"unknown fault {item!r}; known: {', '.join(ALL_FAULTS)}") from None


@dataclass(frozen=True)
class FaultSchedule:
    """When faults happen: fixed request numbers (1-based, counting every request the API
    receives, count_tokens included) and/or a seeded probability per request.

    The random draw depends only on ``seed`` and the request number, so a run is reproducible
    whatever else happens in between.
    """

    by_request: Mapping[int, FaultLike] = field(default_factory=dict)
    probability: float = 0.0
    seed: int = 0
    kinds: Sequence[FaultLike] = ()

    def __post_init__(self) -> None:
        if not 0.0 <= self.probability <= 1.0:
            raise ValueError("probability must be between 0 and 1")
        for item in (*self.by_request.values(), *self.kinds):
            _as_fault(item)  # fail at construction, not at request 57

    def fault_for(self, number: int) -> Fault | None:
        """The fault for request ``number``, or None."""
        if number in self.by_request:
            return _as_fault(self.by_request[number])
        if self.probability <= 0.0:
            return None
        rng = random.Random(f"{self.seed}:{number}")
        if rng.random() >= self.probability:
            return None
        return _as_fault(rng.choice(list(self.kinds or TRANSIENT_FAULTS)))

    @classmethod
    def coerce(cls, faults: FaultSchedule | Mapping[int, FaultLike] | None) -> FaultSchedule:
        """Accept a schedule, a ``{request_number: fault}`` mapping, or None."""
        if faults is None:
            return cls()
        if isinstance(faults, FaultSchedule):
            return faults
        return cls(by_request=dict(faults))

    @classmethod
    def parse(cls, spec: str) -> FaultSchedule:
        """Parse the CLI form ``"2=rate_limit,5=drop,p=0.1,seed=3,kinds=overloaded+drop"``."""
        by_request: dict[int, FaultLike] = {}
        probability, seed = 0.0, 0
        kinds: tuple[str, ...] = ()
        for item in filter(None, (s.strip() for s in spec.split(","))):
            key, sep, value = item.partition("=")
            if not sep:
                raise ValueError(f"bad fault item {item!r}: expected KEY=VALUE")
            if key == "p":
                probability = float(value)
            elif key == "seed":
                seed = int(value)
            elif key == "kinds":
                kinds = tuple(value.split("+"))
            elif key.isdigit():
                by_request[int(key)] = value
            else:
                raise ValueError(f"bad fault item {item!r}")
        return cls(by_request=by_request, probability=probability, seed=seed, kinds=kinds)
