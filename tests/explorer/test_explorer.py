"""The truncation explorer: its replay must report exactly what the engine's own functions decide
when driven directly, its pictures must agree with its tables, and the widget must build (and fall
back to text/HTML) without a kernel."""

from __future__ import annotations

import time
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

import nbagent
from nbagent.engine.api_facts.cost import Usage
from nbagent.engine.api_facts.tokens import MESSAGE_OVERHEAD, TokenCounter
from nbagent.engine.context import (
    ContextManager,
    RequestUsage,
    get_context_window_info,
    get_next_truncation_range,
    get_truncated_messages,
    should_compact_context_window,
)
from nbagent.engine.context.window import start_of_rest
from nbagent.engine.contracts.events import RequestRecord as EngineRecord
from nbagent.engine.contracts.messages import ContentBlock, Message, content_blocks, is_tool_result
from nbagent.engine.loop.compaction import COMPACT_KEEP, hidden_end
from nbagent.engine.state.compactions import SUMMARY_MARK, summary_text
from nbagent.engine.state.session import Session
from nbagent.explorer import Explorer, explore, live_source
from nbagent.explorer.render import (
    request_html,
    request_text,
    strip_counts,
    strip_statuses,
    strip_svg,
    strip_text,
    tokens_chart_svg,
)
from nbagent.explorer.simulate import (
    STRATEGIES,
    Strategy,
    placeholder_summary,
    request_points,
    simulate,
    simulate_all,
)
from nbagent.explorer.synth import ConversationShape, synthetic_history

WINDOW = 8_000
SUMMARY = "[test summary]"


@pytest.fixture(scope="module")
def history() -> list[Message]:
    """200 messages: tool calls with re-reads of the same files."""
    h = synthetic_history(ConversationShape(requests=100))
    assert len(h) == 200
    return h


# --- the independent driving loop: the engine's functions, called the way the loop calls them ----

def compaction_record(request: int) -> EngineRecord:
    return EngineRecord(turn=1, request=request, model="m", usage=Usage(), cost_usd=None, context_tokens=0,
                        max_allowed=0, context_window=0, deleted_range=None, keep=COMPACT_KEEP,
                        file_read_saving=None, retries=0, stop_reason="end_turn", duration_s=0, ts=0)


def list_content(message: Message) -> list[ContentBlock]:
    """A message's list content (every message these tests read has one)."""
    content = message["content"]
    assert isinstance(content, list)
    return content


def drive(strategy: Strategy, history: Sequence[Message], window: int) -> list[tuple[Any, ...]]:
    """Per request: (range, keep fired, tokens sent, visible replaced reads)."""
    counter = TokenCounter()
    info = get_context_window_info(window)
    manager = ContextManager()
    rng: tuple[int, int] | None = None
    session, folded = Session(), 0
    previous: tuple[int, int] | None = None
    out: list[tuple[Any, ...]] = []
    user_indices = [i for i, m in enumerate(history) if m["role"] == "user"]
    for k, i in enumerate(user_indices, start=1):
        hist = list(history[: i + 1])
        ts = k * 10_000.0
        usage = RequestUsage(ts=ts, input_tokens=previous[0], output_tokens=previous[1]) if previous else None
        keep: str | None = None
        replaced: frozenset[int] = frozenset()
        if strategy == "cline":
            res = manager.get_new_context_messages_and_metadata(hist, rng, usage, context_window=window)
            rng = res.deleted_range
            keep = res.keep if res.updated_deleted_range else None
            messages = res.truncated_messages
            replaced = frozenset(j for j in manager.replaced_reads() if start_of_rest(rng) <= j < len(hist))
        elif strategy in ("last_two", "none"):
            if usage is not None and usage.total >= info.max_allowed_size:
                manager.apply_truncation_notice(ts, hist)
                rng = get_next_truncation_range(hist, rng, strategy)
                keep = strategy
            messages = get_truncated_messages(hist, rng, manager.updates)
        elif strategy == "auto_condense":
            # The engine's own session, compacted the way the loop compacts it.
            session.history.extend(hist[len(session.history) + folded:])
            end = hidden_end(session.history)
            if usage is not None and should_compact_context_window(usage.total, window) and end is not None:
                session.compact(end, SUMMARY, compaction_record(k))
                folded = len(hist) - len(session.history)
                rng, keep = (2, folded + 1), COMPACT_KEEP
            messages = list(session.history)
        else:
            messages = get_truncated_messages(hist, None)
        tokens = counter.count_messages(messages)
        reply = history[i + 1] if i + 1 < len(history) else None
        output = counter.count_message(reply) - MESSAGE_OVERHEAD if reply is not None else 0
        out.append((rng, keep, tokens, replaced))
        previous = (tokens, output)
    return out


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_replay_reports_what_the_engine_decides(history: list[Message], strategy: Strategy) -> None:
    result = simulate(strategy, history, WINDOW, summarize=lambda messages: SUMMARY)
    expected = drive(strategy, history, WINDOW)
    got = [(r.deleted_range, r.keep, r.tokens_sent, r.replaced_reads) for r in result.records]
    assert got == expected
    assert len(result.records) == 100
    if strategy != "baseline":
        assert any(keep for _, keep, _, _ in expected), "the window must be small enough to truncate"


def test_cline_shows_file_reads_replaced_instead_of_truncating(history: list[Message]) -> None:
    records = simulate("cline", history, WINDOW).records
    skipped = [r for r in records if r.newly_replaced and r.keep is None]
    assert skipped and all(r.file_read_saving is not None and r.file_read_saving >= 0.3 for r in skipped)
    assert any(r.replaced_reads for r in records)


def test_strip_counts_match_the_table(history: list[Message]) -> None:
    for strategy, result in simulate_all(history, WINDOW).items():
        table = result.table()
        for record, row in zip(result.records, table.itertuples(index=False), strict=False):
            counts = strip_counts(record)
            rng = row[3]  # "deleted range", e.g. "2–41" or ""
            hidden = int(rng.split("–")[1]) - int(rng.split("–")[0]) + 1 if rng else 0
            assert counts["hidden"] + counts["summarised"] == hidden == record.hidden
            # A replaced read sent without its results (its call hidden) is drawn as results omitted.
            omitted_read = int(record.results_omitted in record.replaced_reads)
            assert counts["replaced read"] + omitted_read == row[5] == len(record.replaced_reads)
            assert sum(counts.values()) == record.history_len == row[1]
            # Everything not hidden is sent, one message per cell.
            sent = counts["first pair"] + counts["kept"] + counts["replaced read"] + counts["results omitted"]
            assert sent == record.messages_sent == row[2]
            if strategy == "auto_condense" and record.summary is not None:
                assert counts["hidden"] == 0
            text = strip_text(record, width=10_000)
            assert text.count(".") + text.count("s") == hidden and text.count("r") == counts["replaced read"]


def test_the_strip_draws_a_message_sent_without_its_tool_results_as_such(history: list[Message]) -> None:
    records = simulate_all(history, WINDOW)["cline"].records
    omitted = [r for r in records if r.results_omitted is not None]
    assert omitted  # the truncation hid tool calls whose results come first after the range
    for record in omitted:
        index = record.results_omitted
        assert index is not None and strip_statuses(record)[index] == "results omitted"
        ids = {b["tool_use_id"] for b in content_blocks(history[index]) if is_tool_result(b)}
        sent = {b["tool_use_id"] for m in record.sent for b in content_blocks(m) if is_tool_result(b)}
        assert ids and not ids & sent


class _Request(Sequence[Message]):
    """A sent request that records which of its messages were read (slices only; iterating it fails)."""

    def __init__(self, messages: list[Message]) -> None:
        self.messages, self.read = messages, 0

    def __len__(self) -> int:
        return len(self.messages)

    def __getitem__(self, i: Any) -> Any:
        got = self.messages[i]
        self.read += len(got) if isinstance(i, slice) else 1
        return got

    def __iter__(self) -> Any:
        raise AssertionError("the whole request was scanned")


def test_telling_whether_the_results_were_sent_reads_only_where_the_message_is_sent() -> None:
    """The explorer checks each simulated request for the omitted results: scanning the whole request
    made simulating a 5,000-message session 1.6-1.9x slower (a second per strategy at 1M tokens)."""
    from nbagent.engine.context.as_sent import results_omitted_in

    hist: list[Message] = [{"role": "user", "content": "task"}]
    for i in range(400):
        hist.append({"role": "assistant", "content": [{"type": "tool_use", "id": f"t{i}", "name": "python", "input": {}}]})
        hist.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{i}", "content": "x"}]})
    stripped: Message = {"role": "user", "content": [{"type": "text", "text": "[NOTE] omitted"}]}
    sent = _Request([hist[0], hist[1], stripped, *hist[5:]])  # 2-3 hidden: 4's result (of t1) left out
    assert results_omitted_in(hist, (2, 3), sent) == 4
    assert sent.read <= 5
    whole = _Request([hist[0], hist[1], *hist[4:]])  # a request that sent it (as a summary's may)
    assert results_omitted_in(hist, (2, 3), whole) is None


def test_baseline_never_hides_and_cline_stays_under_the_limits(history: list[Message]) -> None:
    results = simulate_all(history, WINDOW)
    info = get_context_window_info(WINDOW)
    base = results["baseline"].records
    assert all(r.deleted_range is None and r.keep is None and r.messages_sent == r.history_len for r in base)
    assert any(r.over_window for r in base)  # which is the point of truncating
    cline = results["cline"].records
    first = next(i for i, r in enumerate(cline) if r.keep is not None)
    assert all(r.tokens_sent < info.max_allowed_size for r in cline if r.keep is not None)
    assert all(r.tokens_sent < info.context_window and not r.over_window for r in cline[first:])
    assert max(r.tokens_sent for r in cline) < max(r.tokens_sent for r in base)


def test_fast_cache_model_agrees_with_prompt_cache() -> None:
    h = synthetic_history(ConversationShape(requests=30, user_tokens=200, assistant_tokens=80, file_tokens=500))
    for strategy in STRATEGIES:
        for system in (None, "You are a careful agent. " * 300):
            fast = simulate(strategy, h, 6_000, system=system, extra_tokens=40)
            ref = simulate(strategy, h, 6_000, system=system, extra_tokens=40, cache_model="prompt_cache")
            key = [(r.tokens_sent, r.cache_read_tokens, r.cache_write_tokens) for r in fast.records]
            assert key == [(r.tokens_sent, r.cache_read_tokens, r.cache_write_tokens) for r in ref.records]
    cline = simulate("cline", h, 6_000).records
    # A truncation changes message 1 (the notice), so nothing earlier can be read from the cache.
    assert all(r.cache_read_tokens == 0 for r in cline if r.keep is not None)
    assert any(r.cache_read_share > 0.5 for r in cline)


def test_auto_condense_uses_the_summariser_and_never_condenses_a_summary_again(history: list[Message]) -> None:
    seen: list[int] = []

    def summarize(messages: Sequence[Message]) -> str:
        seen.append(len(messages))
        return placeholder_summary(messages)

    result = simulate("auto_condense", history, WINDOW, summarize=summarize)
    condensed = [r for r in result.records if r.condensed]
    assert len(condensed) == len(seen) > 1
    assert condensed[0].summary == summary_text(f"[simulated summary of {seen[0]} messages]")
    assert all(r.summary in [b.get("text") for b in list_content(r.sent[2])] for r in result.records if r.summary)
    assert "[summary]" in request_text(condensed[-1]) and "summary" in request_html(condensed[-1])


def test_auto_condense_is_the_engines_compaction(history: list[Message]) -> None:
    """At each compaction the explorer sends what a session compacted by the engine holds: the
    marked summary after the task pair, hiding from message 2 to just before the latest prompt."""
    result = simulate("auto_condense", history, WINDOW, summarize=lambda messages: SUMMARY)
    first = next(r for r in result.records if r.condensed)
    session = Session()
    session.history.extend(history[: first.history_len])
    end = hidden_end(session.history)
    assert end is not None and first.deleted_range == (2, end - 1) and first.keep == COMPACT_KEEP
    session.compact(end, SUMMARY, compaction_record(first.request))
    assert list(first.sent) == session.history
    assert f"{SUMMARY_MARK}\n{SUMMARY}" in [b.get("text") for b in list_content(first.sent[2])]
    later = [r for r in result.records if r.condensed][1]
    # The second summary covers the first one: its range starts at 2 and ends before the latest prompt.
    prompt = max(i for i in range(later.history_len) if history[i]["role"] == "user"
                 and not any(b["type"] == "tool_result" for b in list_content(history[i])))
    assert later.deleted_range == (2, prompt - 1)


def test_request_view_shows_the_exact_messages_with_notices(history: list[Message]) -> None:
    record = next(r for r in simulate("cline", history, WINDOW).records if r.keep is not None)
    html, text = request_html(record, limit=10_000), request_text(record, limit=10_000)
    assert f"request {record.request}: {record.messages_sent} messages" in text
    assert "truncation notice" in html and ">> [truncation notice]" in text
    assert text.count("\nuser #") + text.count("\nassistant #") == record.messages_sent
    for svg in (strip_svg(simulate("cline", history, WINDOW), record), tokens_chart_svg(simulate("none", history, WINDOW))):
        ET.fromstring(svg)  # well-formed


def test_two_hundred_requests_times_five_strategies_is_fast() -> None:
    h = synthetic_history(ConversationShape(requests=200))
    started = time.perf_counter()
    results = simulate_all(h, 64_000)
    elapsed = time.perf_counter() - started
    assert len(results) == 5 and all(len(r.records) == 200 for r in results.values())
    assert elapsed < 5.0, f"{elapsed:.2f} s"  # ~0.4 s on a laptop-class CPU; generous for CI


def test_request_points_follow_the_loop() -> None:
    h = [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}, {"role": "user", "content": "c"}]
    assert request_points(h) == [0, 2]  # the last user message is the request about to be sent


# --- the live session -------------------------------------------------------------------------

SURFACE = ("history", "records", "sent", "context_window", "provider")


def _has_surface(agent: Any) -> bool:
    return all(hasattr(agent, name) for name in SURFACE)


def _surface(agent: Any) -> Any:
    """The Agent surface the explorer reads. ``Agent.sent`` and ``Agent.context_window`` come with
    the Agent rewrite; until then the test (never the explorer) takes them from the engine."""
    engine = agent.engine
    return SimpleNamespace(history=agent.history, records=agent.records, sent=engine.sent,
                           context_window=engine.context_window, provider=agent.provider)


class _NoEngine(SimpleNamespace):
    @property
    def engine(self) -> Any:
        raise AssertionError("the explorer must not read .engine")


def test_live_source_reads_only_the_public_surface() -> None:
    history = synthetic_history(ConversationShape(requests=3))
    sent = SimpleNamespace(system="You are a test.", messages=history[:5], turn=1)
    records = [SimpleNamespace(request=1, deleted_range=None, keep=None, estimated_input_tokens=10),
               SimpleNamespace(request=2, deleted_range=(2, 3), keep="half", estimated_input_tokens=10**6)]
    agent = _NoEngine(history=history, records=records, sent=[sent], context_window=4_000,
                      provider=SimpleNamespace(name="simulated"))
    for source in (agent, SimpleNamespace(agent=agent)):  # an Agent, or the notebook session
        live = live_source(source)
        assert live.history == tuple(history) and live.window == 4_000 and live.provider == "simulated"
        assert live.system == "You are a test." and live.extra_tokens > 0
        assert live.actual == ((2, (2, 3), "half"),)


async def test_live_session_history_is_replayed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    for name in "abcdefg":
        (tmp_path / f"{name}.txt").write_text("".join(f"{name} line {i} with several words of content\n" for i in range(30)))
    from nbagent.notebook.session import NotebookSession

    agent = nbagent.Agent(provider="simulated", allow=["python", "read_file"],
                          context_window=4000, cwd=tmp_path)
    try:
        for prompt in ["read a.txt", "read b.txt", "what is 2+3", "read c.txt", "read d.txt",
                       "read e.txt", "read f.txt", "read g.txt"]:
            await agent.ask(prompt)
        session = NotebookSession(agent) if _has_surface(agent) else SimpleNamespace(agent=_surface(agent))
        ex = explore(session=session)
        assert ex.use_session and ex.window == 4000
        assert len(ex.history) == len(agent.history)
        assert all(a is b for a, b in zip(ex.history, agent.history, strict=False))  # the real messages
        records = agent.records
        cline = ex.results["cline"]
        assert len(cline.records) == len(records)
        # Same functions, same token estimates: the replay reproduces the session's own ranges.
        assert cline.ranges() == [r.deleted_range for r in records]
        assert any(r.deleted_range for r in records), "the session should have truncated"
        assert [r.tokens_sent for r in cline.records] == [r.context_tokens for r in records]
        assert live_source(session).actual and "The session itself" in ex.to_text()
        assert ex.update(use_session=False, window=64_000).use_session is False  # the synthetic conversation
        assert not ex.w_source.value and ex.w_window.value == 64_000
        ex.w_source.value = True  # the toggle goes back to the session, at the session's window
        assert ex.use_session and ex.window == 4000 and ex.results["cline"].ranges() == cline.ranges()
    finally:
        await agent.aclose()


# --- the widget -------------------------------------------------------------------------------

def test_widget_builds_without_a_kernel_and_falls_back_to_text_and_html() -> None:
    ex = nbagent.explore(window=8_000, shape=ConversationShape(requests=40))
    assert isinstance(ex, Explorer) and ex.request == 40
    bundle = ex._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    html, text = bundle["text/html"], bundle["text/plain"]
    assert isinstance(html, str) and isinstance(text, str)
    cline = ex.results["cline"]
    first_range = next(r.deleted_range for r in cline.records if r.keep is not None)
    assert first_range is not None
    assert "deleted range" in html and "cache-read share" in html and f"{first_range[0]}–{first_range[1]}" in html
    assert "deleted range" in text and f"{first_range[0]}–{first_range[1]}" in text
    assert "<svg" in html and "Cline automatic" in html and "no truncation" in text

    ex.w_request.value = 7  # the slider redraws strips and request views only
    assert ex.request == 7 and "request 7:" in ex._columns["cline"]["request"].value
    before = ex.results["cline"].ranges()
    ex.w_window.value = 64_000  # a control recomputes
    assert ex.window == 64_000 and ex.results["cline"].ranges() != before
    ex.w_strategies["baseline"].value = False
    assert "baseline" not in ex.results and len(ex.w_columns.children) == 4
    ex.w_window.value = 0  # custom: the number field decides
    ex.w_custom.value = 5_000
    assert ex.window == 5_000 and not ex.w_custom.disabled


def test_explore_takes_shape_fields_and_rejects_unknown_settings() -> None:
    ex = nbagent.explore(window=8_000, requests=12, user_tokens=100, strategies=["cline", "baseline"])
    assert ex.shape.requests == 12 and ex.shape.user_tokens == 100 and ex.requests == 12
    assert list(ex.results) == ["cline", "baseline"]
    with pytest.raises(ValueError, match="unknown strategy"):
        explore(strategies=["half"])  # type: ignore[list-item]  # deliberately wrong: an unknown strategy
    with pytest.raises(TypeError, match="unknown settings: colour"):
        explore(colour="red")


def test_a_short_strip_is_wide_enough_for_its_caption(history: list[Message]) -> None:
    # "request 4: 7 messages, …" was cut: an SVG clips what lies outside its width.
    result = simulate("cline", history, WINDOW)
    (svg,) = ET.fromstring(strip_svg(result, result.record(4)))  # the SVG in its figure block
    caption = "".join(t.text or "" for t in svg if t.tag.endswith("text"))
    assert caption.startswith("request 4: 7 messages")
    assert float(svg.get("width", "0")) >= 6 * len(caption)


def test_the_policy_strip_draws_a_message_sent_without_its_tool_results_as_such(history: list[Message]) -> None:
    from nbagent.explorer.policies import simulate_policy

    records = simulate_policy("cline", history, WINDOW).records
    drawn = [r for r in records if "o" in r.strip]
    assert drawn  # truncation hid tool calls whose results come first after the range
    for record in drawn:
        index = record.strip.index("o")
        assert record.strip.count("o") == 1 and record.strip[index - 1] == "."
        ids = {b["tool_use_id"] for b in content_blocks(history[index]) if is_tool_result(b)}
        sent = {b["tool_use_id"] for m in record.sent for b in content_blocks(m) if is_tool_result(b)}
        assert ids and not ids & sent
