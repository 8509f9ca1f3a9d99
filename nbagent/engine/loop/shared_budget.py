"""One machine's kernels on one key: a budget they share, so that they send as one client would.

Each kernel's :class:`~nbagent.engine.loop.pacing.RatePacer` sees only its own answers: sixty
kernels of one class that read the same "3 requests left" send together, and fifty of them are
refused. The kernels of one user on one machine need not guess: they book their sends in a shared
budget (a file per key, :mod:`nbagent.engine.disk.shared_file`), a token bucket per dimension
(``requests``, ``input-tokens``) that every answer's headers set again:

* :meth:`SharedBudget.reserve`, before a send: the bucket's level now, refilled at the rate the
  headers stated; the send is booked at the first moment it fits, after every send booked before it
  (a level below zero is the queue).
* :meth:`SharedBudget.reconcile`, on an answer or a 429: the headers' ``remaining`` is the bucket
  when the server took that request; what the machine booked after it is taken off again, and what
  refilled since is added. Others on the key (another machine) show as a lower ``remaining``, and
  the queue grows by as much. A 429 without headers empties the buckets.

Before any answer the budget is unknown: sixty kernels started in the same second would all send, and
all but the bucket's size be refused. So the first send with nothing known is a probe: the machine's
other kernels wait for its answer (at most :data:`FIRST_ANSWER_WAIT_S`), then book against the
budget its headers state. A server that answers without headers is not probed again.
Pure: the time is passed in, and the store is injected (:class:`MemoryStore` for the simulated class
and the tests, :class:`~nbagent.engine.disk.shared_file.SharedFile` for kernels).
"""

from __future__ import annotations

import math
from typing import Literal, Protocol, TypedDict, TypeGuard, TypeVar

from ..api_facts.rate_limits import SECONDS_PER_WINDOW, Bucket, RateLimitSnapshot
from ..disk.shared_file import Change

SHARED_DIMS = ("requests", "input-tokens")
"""The buckets booked ahead (output tokens are not known before the answer)."""
MAX_SENDS = 2000
"""Booked sends kept (those of the last window): enough for 2,000 requests a minute."""
MAX_MAGNITUDE = 1e15
"""Larger numbers in the file are not ours (1e999 reads as infinity): the state is dropped."""
CLOCK_SKEW_S = 1.0
"""A state stamped later than this after now is from another clock (a reboot): it is dropped."""
RATE_MEMORY_S = 120.0
"""A bucket's rate is the average of what its headers stated, each weighted by its reset time (stated
to the second, a reset 1 s away may be 1.9 s: the first answer's "one unit used" put the rate 50% too
high), over the last this many seconds of resets (so a new limit is learnt)."""
RATE_DOUBT = 4.0
"""A refused request's bucket that, by its reset time, would refill more than this many times faster
than ``retry-after`` says is capped at the ``retry-after`` rate: a server whose reset means "the next
unit" instead of "full again" made every kernel believe its bucket full in a second (95% refused)."""
CHARGE_MEMORY = 0.9
"""How much of the charged share an answer keeps (the rest is its own): about the last ten answers."""
CAP_MEMORY_S = 1200.0
"""A cap no 429 renewed for this long (20 minutes) is dropped: the file outlives sessions, and a server
may have refused once for reasons of its own."""
RESET_GRAIN_S = 1.0
"""Resets are stated to the second: one 1 s away is 1 to 2 s away."""
FIRST_ANSWER_WAIT_S, FIRST_ANSWER_POLL_S = 5.0, 0.1
"""How long the machine's kernels wait for the probe's answer, and how often they look for it."""

T = TypeVar("T")
Outcome = Literal["head", "answered", "refused", "failed", "dropped"]
"""What became of a booked send: its headers arrived at the response's head; it was answered; refused
(429: it took nothing); it failed otherwise (given back: it most likely took nothing); it was never
sent or was stopped (given back)."""


class BucketState(TypedDict):
    """One bucket as the machine knows it: ``level`` at ``at`` (below 0: sends queued), its refill rate
    and the seconds of reset times that rate was measured over (see :data:`RATE_MEMORY_S`)."""

    limit: int
    rate: float
    level: float
    at: float
    measured_s: float
    cap: float
    """The most a 429's ``retry-after`` allowed for the rate (0: none): see :data:`RATE_DOUBT`."""
    capped_at: float
    """When: a cap holds for :data:`CAP_MEMORY_S`, then the headers are believed again."""


class BudgetState(TypedDict):
    """The shared document: the buckets, the sends booked in the last window as ``[slot, input tokens]``,
    when the probe was sent (None: none is out) and when the last answer or failure came."""

    buckets: dict[str, BucketState]
    sends: list[list[float]]
    probe: float | None
    answered: float | None
    charged_share: float
    """What the server charged the machine's recent sends, as a share of their whole count (cache reads
    are free)."""


class BudgetStore(Protocol):
    """Where the state is kept: ``update`` reads it, applies a change and writes it, as one step."""

    def update(self, change: Change[T]) -> T: ...


class MemoryStore:
    """The state in this process only (the simulated class's machine, tests)."""

    def __init__(self) -> None:
        self.document: object = None

    def update(self, change: Change[T]) -> T:
        self.document, result = change(self.document)
        return result


class Booking(TypedDict):
    """What :meth:`SharedBudget.reserve` booked: wait ``delay_s`` (for ``dimension``), sent at ``slot``;
    ``again``: nothing booked, wait and ask again (the probe's answer is awaited)."""

    delay_s: float
    dimension: str
    slot: float
    again: bool


class SharedBudget:
    """The budget the kernels of one machine share for one key (see the module docstring)."""

    def __init__(self, store: BudgetStore) -> None:
        self.store = store

    def reserve(self, now: float, need_input: int, counted: bool = False) -> Booking:
        """Book the next send: the wait until it fits after every send booked before it. ``need_input``
        is its uncached input, or (``counted``) the count of its whole input, of which the server charges
        the share the machine's answers showed (in a class, one request writes the cache the next reads)."""

        def change(document: object) -> tuple[object, Booking]:
            state = _state_of(document, now)
            booking: Booking = {"delay_s": 0.0, "dimension": "", "slot": now, "again": False}
            need = round(need_input * state["charged_share"]) if counted else need_input
            if not state["buckets"]:
                probe, answered = state["probe"], state["answered"]
                if probe is not None and now - probe < FIRST_ANSWER_WAIT_S:
                    wait = min(FIRST_ANSWER_POLL_S, probe + FIRST_ANSWER_WAIT_S - now)
                    return state, {"delay_s": wait, "dimension": "first answer", "slot": now, "again": True}
                if answered is None or now - answered > SECONDS_PER_WINDOW:
                    state["probe"] = now  # this send is the probe
            needs = {dim: _need(dim, b, need) for dim, b in state["buckets"].items()}
            for dim, b in state["buckets"].items():
                rate = _booking_rate(b)
                b["level"], b["at"] = min(float(b["limit"]), b["level"] + rate * (now - b["at"])), now
                wait = max(needs[dim] - b["level"], 0.0) / rate
                if wait > booking["delay_s"]:
                    booking = {"delay_s": wait, "dimension": dim, "slot": now + wait, "again": False}
            for dim, b in state["buckets"].items():
                b["level"] -= needs[dim]
            state["sends"].append([booking["slot"], float(need)])
            return state, booking

        return self.store.update(change)

    def reconcile(self, now: float, snapshot: RateLimitSnapshot | None, slot: float, outcome: Outcome,
                  charged: tuple[int, int] | None = None) -> int:
        """Take the ``outcome`` of the send booked at ``slot`` (see :data:`Outcome`) and its headers (None:
        it had none); ``charged``: answered, its uncached input and the count of its whole input. Returns
        how many sends this machine booked in the last window."""

        def change(document: object) -> tuple[object, int]:
            state = _state_of(document, now)
            if outcome != "dropped" or state["probe"] == slot:
                state["probe"] = None  # the probe is back (or will never be)
            if outcome != "dropped":
                state["answered"] = now
            sends = state["sends"]
            own = [s for s in sends if s[0] == slot]
            if outcome in ("refused", "failed", "dropped"):
                state["sends"] = sends = [s for s in sends if s[0] != slot] + own[1:]
                for dim, b in state["buckets"].items() if own else ():  # (headers, if any, set it below)
                    b["level"] = min(float(b["limit"]), b["level"] + (1.0 if dim == "requests" else own[0][1]))
            elif charged is not None:
                _take_charge(state, own, *charged)
            later = [s for s in sends if s[0] > slot]
            later_need = {"requests": float(len(later)), "input-tokens": sum(s[1] for s in later)}
            if snapshot is not None and snapshot.buckets:
                refused = outcome == "refused"
                caps = _doubted_rates(state, snapshot, own[0][1] if own else 0.0) if refused else {}
                _set_from_headers(state, snapshot, now, later_need)
                for dim, cap in caps.items():  # the lowest a 429 allowed (one may come half a unit early)
                    b = state["buckets"][dim]
                    b["cap"], b["capped_at"] = min(cap, b["cap"]) if b["cap"] else cap, now
            elif outcome == "refused":  # a 429 without headers: the buckets are empty
                for dim, b in state["buckets"].items():
                    b["level"], b["at"] = -later_need[dim], now
            return state, sum(1 for s in sends if now - SECONDS_PER_WINDOW < s[0] <= now)

        return self.store.update(change)


def _take_charge(state: BudgetState, own: list[list[float]], uncached: int, counted: int) -> None:
    """An answer says what its send cost: its booking is corrected, and the share of a count the server
    charges is learnt (a moving average)."""
    if own:
        own[0][1] = float(uncached)
    if counted > 0:
        share = min(max(uncached / counted, 0.05), 1.0)
        state["charged_share"] = CHARGE_MEMORY * state["charged_share"] + (1 - CHARGE_MEMORY) * share


def _doubted_rates(state: BudgetState, snapshot: RateLimitSnapshot, need_input: float) -> dict[str, float]:
    """The rate caps a 429 calls for: a bucket that had no room for the refused request, whose headers
    (or what the machine measured before) say it refills more than :data:`RATE_DOUBT` times faster than
    ``retry-after`` does, is capped at the ``retry-after`` rate."""
    wait, caps = snapshot.retry_after_s, {}
    for dim in SHARED_DIMS:
        stated, known = snapshot.buckets.get(dim), state["buckets"].get(dim)
        need = 1.0 if dim == "requests" else need_input
        if not wait or stated is None or need <= 0 or stated.remaining >= need:
            continue
        rate = max(stated.rate, known["rate"] if known is not None else 0.0)
        if rate > RATE_DOUBT * need / wait:
            caps[dim] = need / wait
    return caps


def _need(dim: str, bucket: BucketState, need_input: int) -> float:
    return 1.0 if dim == "requests" else float(min(need_input, bucket["limit"]))


def _set_from_headers(state: BudgetState, snapshot: RateLimitSnapshot, now: float,
                      later_need: dict[str, float]) -> None:
    """Each shared bucket from the headers: ``remaining`` when the server took the request, refilled
    since the headers came (``age_s``), less what was booked after it."""
    for dim in SHARED_DIMS:
        stated = snapshot.buckets.get(dim)
        if stated is None or stated.limit <= 0:
            continue
        known = state["buckets"].get(dim)
        same = known if known is not None and known["limit"] == stated.limit else None
        rate, measured = _rate(stated, same)
        cap, capped_at = (same["cap"], same["capped_at"]) if same is not None else (0.0, 0.0)
        if cap and now - capped_at > CAP_MEMORY_S:
            cap = 0.0  # no 429 has contradicted the headers for a while: believe them again
        refill = min(rate, cap) if cap else rate
        level = min(float(stated.limit), stated.remaining + refill * snapshot.age_s) - later_need[dim]
        state["buckets"][dim] = {"limit": stated.limit, "rate": rate, "level": level, "at": now, "measured_s": measured,
                                 "cap": cap, "capped_at": capped_at}


def _rate(stated: Bucket, known: BucketState | None) -> tuple[float, float]:
    """(rate, seconds it was measured over): ``known``'s averaged with what ``stated`` shows (see
    :data:`RATE_MEMORY_S`). A full bucket's reset says nothing of its rate."""
    used = stated.limit - stated.remaining
    weight = stated.reset_s + RESET_GRAIN_S / 2 if used > 0 else 0.0
    sample = used / weight if weight > 0 else stated.rate
    if known is None:
        return sample, weight
    kept = min(known["measured_s"], RATE_MEMORY_S - min(weight, RATE_MEMORY_S))
    if kept + weight <= 0:
        return known["rate"], kept
    return (known["rate"] * kept + sample * weight) / (kept + weight), kept + weight


def _booking_rate(bucket: BucketState) -> float:
    """The rate bookings count on: the measured one, less while it was measured over little time."""
    measured = max(bucket["measured_s"], RESET_GRAIN_S)
    rate = min(bucket["rate"], bucket["cap"]) if bucket["cap"] else bucket["rate"]
    return rate * measured / (measured + RESET_GRAIN_S)


def _state_of(document: object, now: float) -> BudgetState:
    """The state ``document`` holds, checked field by field (another process or version wrote it);
    anything malformed or from another clock is dropped. Sends older than a window are forgotten."""
    state: BudgetState = {"buckets": {}, "sends": [], "probe": None, "answered": None, "charged_share": 1.0}
    if not isinstance(document, dict):
        return state
    share = document.get("charged_share")
    if _finite(share) and 0.05 <= share <= 1.0:
        state["charged_share"] = float(share)
    for name in ("probe", "answered"):
        stamp = document.get(name)
        if _finite(stamp) and stamp <= now + CLOCK_SKEW_S:
            state[name] = float(stamp)
    buckets, sends = document.get("buckets"), document.get("sends")
    for dim, b in (buckets.items() if isinstance(buckets, dict) else ()):
        if dim in SHARED_DIMS and _valid_bucket(b, now):
            state["buckets"][dim] = {"limit": int(b["limit"]), "rate": float(b["rate"]), "level": float(b["level"]),
                                     "at": float(b["at"]), "measured_s": _number(b.get("measured_s")),
                                     "cap": _number(b.get("cap")), "capped_at": _number(b.get("capped_at"))}
    for s in (sends if isinstance(sends, list) else ())[-MAX_SENDS:]:
        if (isinstance(s, list) and len(s) == 2 and all(_finite(x) for x in s)
                and now - SECONDS_PER_WINDOW < s[0] <= now + 10 * SECONDS_PER_WINDOW):
            state["sends"].append([float(s[0]), float(s[1])])
    return state


def _number(value: object) -> float:
    return float(value) if _finite(value) and value > 0 else 0.0


def _finite(value: object) -> TypeGuard[int | float]:
    # (the magnitude first: a huge int cannot be made a float)
    return isinstance(value, (int, float)) and not isinstance(value, bool) and abs(value) < MAX_MAGNITUDE \
        and math.isfinite(value)


def _valid_bucket(b: object, now: float) -> bool:
    if not isinstance(b, dict) or not all(_finite(b.get(k)) for k in ("limit", "rate", "level", "at")):
        return False
    return bool(b["limit"] >= 1 and b["rate"] > 0 and -MAX_SENDS * b["limit"] <= b["level"] <= b["limit"]
                and b["at"] <= now + CLOCK_SKEW_S)


__all__ = ["BudgetState", "BudgetStore", "Booking", "MemoryStore", "SharedBudget"]
