"""Issue 22: configured secrets never show in what a request shows while it runs — streamed deltas
(split anywhere), error messages built from a server's body — and a secret too short to redact is
named in a notice. The real loop against the simulated Messages API through the real SDK."""

from __future__ import annotations

import dataclasses
import json
import random
from collections.abc import Sequence
from pathlib import Path

import pytest

from nbagent.engine.contracts.events import (
    ApiRequestFailed,
    Done,
    Event,
    Notice,
    RetryScheduled,
    StreamInterrupted,
    TextDelta,
    ToolUseDelta,
)
from nbagent.engine.loop.sanitize import REDACTED, Sanitizer, StreamRedactor
from nbagent.providers.simulated import SimulatedAPI, text_reply, tool_reply
from nbagent.providers.simulated.faults import Fault, FaultKind
from nbagent.tools.python import Python
from tests.engine.loop._blocks import content_list
from tests.engine.loop.test_hostile_input import SECRET, folder_text, scripted
from tests.engine.loop.test_query_support import done_of, make_engine, run

TOKEN = "token-value-12345"


def shown(events: Sequence[Event], kind: type[TextDelta] | type[ToolUseDelta]) -> str:
    return "".join(e.partial_json if isinstance(e, ToolUseDelta) else e.text for e in events if isinstance(e, kind))


def test_split_anywhere_a_secret_never_reaches_the_shown_text() -> None:
    sanitizer = Sanitizer(secrets=(SECRET, TOKEN))
    text = f"a {SECRET}{TOKEN} b {SECRET[:-1]} c {TOKEN}"
    rng = random.Random(7)
    for _ in range(300):
        cuts = sorted(rng.sample(range(1, len(text)), rng.randint(1, 12)))
        redactor, out = StreamRedactor(sanitizer), []
        for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True):
            out.append(redactor.feed(0, text[a:b]))
            assert SECRET not in "".join(out) and TOKEN not in "".join(out)
        assert "".join(out) + redactor.flush(0) == sanitizer.redact(text)


async def test_a_key_in_a_streamed_reply_is_redacted_in_the_deltas_too(tmp_path: Path) -> None:
    tail = " and then some more words" * 10
    api = scripted(tool_reply("python", {"code": f"x = '{SECRET}'"}), text_reply(f"The key is {SECRET}, see{tail}"))
    engine = make_engine(api, tmp_path, tools=[Python()], allow=("python",))
    engine._secrets = (SECRET,)  # what Agent(api_key=...) passes as ``secrets=``
    ev = await run(engine, "show it")
    assert done_of(ev).reason == "end_turn"
    assert sum(isinstance(e, TextDelta) for e in ev) > 3  # the simulator streams it in pieces
    assert shown(ev, TextDelta) == f"The key is {REDACTED}, see{tail}"
    assert SECRET not in shown(ev, ToolUseDelta) and REDACTED in shown(ev, ToolUseDelta)
    assert [b["text"] for b in content_list(engine.session.history[-1]) if b["type"] == "text"] == [shown(ev, TextDelta)]


async def test_a_401_body_echoing_the_key_is_redacted_in_the_failure_done_and_the_folder(tmp_path: Path) -> None:
    echo = Fault("auth", FaultKind.HTTP, 401, "authentication_error", f"invalid x-api-key: {SECRET}")
    engine = make_engine(SimulatedAPI(lambda body: text_reply("hi"), faults={1: echo}), tmp_path)
    engine._secrets = (SECRET,)
    ev = await run(engine, "hi")
    failed = next(e for e in ev if isinstance(e, ApiRequestFailed))
    assert REDACTED in failed.message and REDACTED in (done_of(ev).error or "")
    assert SECRET not in repr(ev) and SECRET not in folder_text(tmp_path / "task")
    assert done_of(ev).reason == "error"


async def test_retried_and_mid_stream_errors_echoing_a_listed_variable_are_redacted(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_TOKEN", TOKEN)
    server = Fault("server_error", FaultKind.HTTP, 500, "api_error", f"failed for {TOKEN}")
    sse = dataclasses.replace(Fault.sse_error(after_events=30, error_type="api_error"), message=f"boom {TOKEN}")
    api = SimulatedAPI(lambda body: text_reply(f"Token {TOKEN} is set" + ", and more text" * 40),
                       faults={1: server, 2: sse})
    engine = make_engine(api, tmp_path, secret_env=("MY_TOKEN",))
    ev = await run(engine, "hi")
    assert done_of(ev).reason == "end_turn"
    retries = [e.message for e in ev if isinstance(e, RetryScheduled)]
    assert len(retries) == 2 and all(REDACTED in m for m in retries)
    cut = next(e for e in ev if isinstance(e, StreamInterrupted))
    assert cut.partial_text.startswith(f"Token {REDACTED} is set")
    assert TOKEN not in repr(ev) and TOKEN not in folder_text(tmp_path / "task")


async def test_a_secret_env_value_too_short_to_redact_is_named_in_a_notice_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_PIN", "q7z4")
    engine = make_engine(scripted(), tmp_path, secret_env=("MY_PIN", "MY_TOKEN"))
    monkeypatch.setenv("MY_TOKEN", TOKEN)  # long enough: no notice
    first = await run(engine, "one")
    notices = [e.message for e in first if isinstance(e, Notice) and "MY_PIN" in e.message]
    assert len(notices) == 1 and "not redacted" in notices[0] and "q7z4" not in json.dumps(notices)
    assert not any(isinstance(e, Notice) and "MY_TOKEN" in e.message for e in first)
    second = await run(engine, "two")
    assert not any(isinstance(e, Notice) and "MY_PIN" in e.message for e in second)
    assert isinstance(second[-1], Done)


def test_a_secret_env_value_read_from_a_file_with_its_line_end_is_redacted_without_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``os.environ["ACME_GW"] = open("gw.key").read()`` keeps the file's line end; the key as the
    SDK sends it and as code copies it (``.strip()``) has none (attacker pass 17)."""
    from nbagent.engine.loop.sanitize import secret_values

    monkeypatch.setenv("ACME_GW", "gwk-4fT9qLm2Xz8RbN7c\n")
    clean = Sanitizer(secret_values(("ACME_GW",)))
    assert clean.redact("gw: str (len 20, 'gwk-4fT9qLm2Xz8RbN7c')") == f"gw: str (len 20, '{REDACTED}')"
