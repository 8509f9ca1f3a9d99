"""Kernel facts travel in the newest user message (in full, or as the change since the previous
prompt), never in the system prompt, so the cached prefix of a conversation survives them."""

from __future__ import annotations

from pathlib import Path

from nbagent.engine.loop.facts import FactsSnapshot, KernelFactsTracker, VariableInfo
from nbagent.engine.loop.prompt import SystemPromptContext, build_system_prompt
from tests.engine.loop._blocks import as_text, content_list


def snap(*names: str, inputs: tuple[str, ...] = ()) -> FactsSnapshot:
    return FactsSnapshot.of([VariableInfo(n, "int", "1") for n in names], inputs)


def test_the_system_prompt_has_no_kernel_facts() -> None:
    text = build_system_prompt(SystemPromptContext(cwd=Path("/tmp"), in_notebook=True))
    assert "kernel-state" in text and "User variables:" not in text


def test_the_first_prompt_gets_the_full_facts() -> None:
    block = KernelFactsTracker().block(snap("df", inputs=("df = 1",)), at=0, visible_from=2)
    assert block is not None
    assert block["text"].startswith("<kernel-state>") and "df: int (1)" in block["text"] and "df = 1" in block["text"]


def test_a_later_prompt_gets_only_the_change_and_nothing_when_nothing_changed() -> None:
    tracker = KernelFactsTracker()
    many = [f"v{i}" for i in range(20)]
    tracker.block(snap(*many), at=0, visible_from=2)
    block = tracker.block(snap(*many[1:], "new"), at=2, visible_from=2)
    assert block is not None
    assert "changes-since-previous-prompt" in block["text"]
    assert "new: int" in block["text"] and "Removed variables: v0" in block["text"] and "v5" not in block["text"]
    assert tracker.block(snap(*many[1:], "new"), at=4, visible_from=2) is None


def test_the_full_facts_again_once_the_snapshot_is_hidden_or_forgotten() -> None:
    tracker = KernelFactsTracker()
    many = [f"v{i}" for i in range(20)]
    tracker.block(snap(*many), at=0, visible_from=2)
    tracker.block(snap(*many), at=4, visible_from=2)
    assert tracker.block(snap(*many, "x"), at=6, visible_from=2)["text"].startswith("<kernel-state changes")  # type: ignore[index]
    tracker.block(snap(*many), at=8, visible_from=2)  # a full snapshot only at 0 so far: 0 stays visible
    tracker.forget()
    assert tracker.block(snap(*many), at=10, visible_from=2)["text"].startswith("<kernel-state>")  # type: ignore[index]
    # The snapshot at 10 is hidden by a range ending at 11: diffs would build on nothing.
    assert tracker.block(snap(*many, "y"), at=12, visible_from=12)["text"].startswith("<kernel-state>")  # type: ignore[index]


def test_no_facts_and_no_history_send_nothing() -> None:
    assert KernelFactsTracker().block(snap(), at=0, visible_from=2) is None


async def test_changing_variables_keep_the_system_prompt_and_the_cached_prefix() -> None:
    from nbagent.engine.contracts.config import SessionConfig
    from nbagent.engine.loop.query import QueryEngine
    from nbagent.providers.anthropic import AnthropicProvider
    from nbagent.providers.simulated import SimulatedAPI, text_reply

    names = [f"base{i}" for i in range(20)]
    api = SimulatedAPI(lambda body: text_reply("A long enough answer to be worth caching. " * 150))
    engine = QueryEngine(SessionConfig(model="claude-sonnet-5-5", in_notebook=True),
                         provider=AnthropicProvider(api.async_client, name="simulated"),
                         kernel_facts=lambda: ([VariableInfo(n, "int") for n in names], []))
    for i in range(3):
        names.append(f"x{i}")
        async for _ in engine.submit_message(f"prompt {i}"):
            pass
    bodies = [r.body for r in api.requests]
    assert len({str(b["system"]) for b in bodies}) == 1
    last_prompt = content_list(engine.session.history[-2])
    assert [b["type"] for b in last_prompt] == ["text", "text"] and "x2: int" in as_text(last_prompt[1])["text"]
    assert "x1" not in as_text(last_prompt[1])["text"]  # only the change since the previous prompt
    assert engine.session.records[-1].usage.cache_read_input_tokens > 0


def test_the_last_error_and_outputs_are_told_once_and_again_only_when_they_change() -> None:
    tracker = KernelFactsTracker()
    error = "In[3] raised KeyError: 'b'\nscores['b']\nTraceback ..."
    first = FactsSnapshot.of([], [], error, ["Out[4]: 42"])
    text = tracker.block(first, at=0, visible_from=2)["text"]  # type: ignore[index]
    assert "Last error" in text and "KeyError: 'b'" in text and "Out[4]: 42" in text
    assert tracker.block(first, at=2, visible_from=2) is None  # nothing new: nothing sent
    later = FactsSnapshot.of([], [], error, ["Out[4]: 42", "Out[6]: 'x' * 10000"])
    diff = tracker.block(later, at=4, visible_from=2)["text"]  # type: ignore[index]
    assert "Out[6]" in diff and "Out[4]" not in diff and "Last error" not in diff
    assert len(FactsSnapshot.of([], [], "e" * 100_000).full_text()) < 4_000  # bounded
