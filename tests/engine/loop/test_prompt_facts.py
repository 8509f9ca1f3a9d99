"""Kernel facts travel in the newest user message (in full, or as the change since the previous
prompt), never in the system prompt, so the cached prefix of a conversation survives them."""

from __future__ import annotations

from pathlib import Path
from typing import cast

from nbagent.engine.contracts.messages import Message
from nbagent.engine.loop.facts import FactsSnapshot, ImagesSeen, KernelFactsTracker, VariableInfo
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


def test_a_cell_run_again_since_the_previous_prompt_is_told_although_its_text_was_seen() -> None:
    # sales.csv changed on disk and the user ran `sales = pd.read_csv(...)` again: the frame's summary
    # (shape, ranges, first rows) is the same, and the cell's text was among the inputs already, so
    # nothing was sent and `%agent context` said nothing had changed; the previous answer read as current.
    load = "sales = pd.read_csv('sales.csv')"
    before = snap("sales", inputs=("import pandas as pd", load))
    again = snap("sales", inputs=("import pandas as pd", load, load)).diff_text(before)
    assert again is not None and "New cell inputs" in again and load in again
    full = ("a = 1", "b = 2", "c = 3", "d = 4", load)  # the window of recent cells full: it slides
    slid = snap("sales", inputs=(*full[1:], load)).diff_text(snap("sales", inputs=full))
    assert slid is not None and slid.count(load) == 1 and "a = 1" not in slid and "d = 4" not in slid
    assert snap("sales", inputs=full).diff_text(snap("sales", inputs=full)) is None  # nothing ran


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


def _image_message(data: str) -> Message:
    return {"role": "user", "content": [
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": data}},
        {"type": "text", "text": "look"}]}


def _reply(text: str) -> Message:
    return {"role": "assistant", "content": [{"type": "text", "text": text}]}


def test_images_seen_follow_the_history_as_it_grows_is_hidden_and_is_rolled_back() -> None:
    seen = ImagesSeen()
    history: list[Message] = [_image_message("first"), _reply("ok")]
    assert seen(history, None) == {hash("first")}
    history += [_image_message("second"), _reply("ok"), _image_message("third"), _reply("ok")]
    assert seen(history, None) == {hash("first"), hash("second"), hash("third")}
    # Hidden from the model (a truncation of messages 2 and 3): the first two stay visible.
    assert seen(history, (2, 3)) == {hash("first"), hash("third")}
    # A rollback and another prompt in the same places: the replaced messages are read again.
    del history[4:]
    history += [_image_message("other"), _reply("ok")]
    assert seen(history, None) == {hash("first"), hash("second"), hash("other")}
    # A prompt merged into the last user message replaces that message: its new image counts.
    history[-2] = {"role": "user", "content": [*content_list(history[-2]), *content_list(_image_message("merged"))]}
    assert seen(history, None) == {hash("first"), hash("second"), hash("other"), hash("merged")}
    # A shorter history (a compaction that replaced everything).
    assert seen([_reply("summary")], None) == frozenset()


def test_images_seen_indexes_only_the_new_messages_of_a_long_history() -> None:
    seen = ImagesSeen()
    history: list[Message] = [m for i in range(2_000) for m in (_image_message(f"i{i}"), _reply("ok"))]
    assert len(seen(history, None)) == 2_000
    read: list[int] = []

    class Counted(dict):  # type: ignore[type-arg]
        def get(self, key: object, default: object = None) -> object:
            read.append(1)
            return super().get(key, default)

    history += cast("list[Message]", [Counted(_image_message("new")), Counted(_reply("ok"))])
    assert hash("new") in seen(history, None)
    assert len(read) <= 4  # the two new messages, not the 4,000 before them
