"""Events are frozen, kind-tagged, and survive the JSON round trip of ui_messages.json."""

from __future__ import annotations

import dataclasses
import json

import pytest

from nbagent.engine.api_facts.cost import Usage
from nbagent.engine.contracts import events as ev

RECORD = ev.RequestRecord(turn=1, request=2, model="claude-sonnet-5-5", usage=Usage(10, 5, 3, 2, 1), cost_usd=0.01,
                       context_tokens=15, max_allowed=98000.0, context_window=128000, deleted_range=(2, 5),
                       keep="half", file_read_saving=0.31, retries=1, stop_reason="end_turn", duration_s=0.5, ts=123)

SAMPLES: list[ev.Event] = [
    ev.TextDelta(text="hi", index=0), ev.ThinkingDelta(text="hmm"),
    ev.ToolUseDelta(tool_use_id="t", name="python", partial_json='{"co'),
    ev.ToolUse(tool_use_id="t", name="python", input={"code": "1"}), ev.PermissionAsked(tool_use_id="t", name="python", input={}),
    ev.PermissionDenied(tool_use_id="t", name="python", input={}, reason="no"),
    ev.ToolResult(tool_use_id="t", name="python", content="1", is_error=False, duration_s=0.1),
    ev.ApiRequestStarted(turn=1, request=1, model="m", attempt=0),
    ev.RetryScheduled(attempt=1, delay_s=2.0, error_kind="overloaded", status=529),
    ev.RateLimitWait(delay_s=12.5, reason="retry_after", dimension="requests", remaining=0, limit=50, waited_s=3.0),
    ev.StreamInterrupted(error_kind="connection", partial_text="par"), ev.ApiRequestFailed(error_kind="auth", status=401),
    ev.ContextTruncated(deleted_range=(2, 9), keep="quarter", reason="overflow"), ev.ModelFallback(from_model="a", to_model="b"),
    ev.ServerToolResult(tool_use_id="s", name="web_search", input={"query": "q"}, sources=("A — https://a",)),
    ev.Notice(level="warning", message="w"), ev.RequestCompleted(record=RECORD),
    ev.Done(reason="aborted", totals=ev.Totals(requests=2, usage=Usage(1, 2)), error=None),
]


def test_every_event_kind_has_a_sample():
    assert {e.kind for e in SAMPLES} == set(ev.EVENT_TYPES)


@pytest.mark.parametrize("event", SAMPLES, ids=lambda e: e.kind)
def test_round_trip_through_json(event):
    data = json.loads(json.dumps(ev.event_to_dict(event)))
    assert data["kind"] == event.kind
    assert ev.event_from_dict(data) == event


@pytest.mark.parametrize("event", SAMPLES, ids=lambda e: e.kind)
def test_events_are_frozen(event):
    with pytest.raises(dataclasses.FrozenInstanceError):
        event.kind = "other"  # type: ignore[misc]


def test_unknown_kind_is_a_clear_error():
    with pytest.raises(ValueError, match="telepathy"):
        ev.event_from_dict({"kind": "telepathy"})  # pydantic names the tag it does not know
