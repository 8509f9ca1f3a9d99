"""What every request repeats (system prompt, tool definitions) is built again only when its inputs change."""

from __future__ import annotations

import gc
import os
import weakref
from pathlib import Path

from nbagent.engine.contracts.config import SessionConfig
from nbagent.engine.loop.prompt import RequestPrompt
from tests.engine.loop.test_query_support import Add, Echo


def test_the_same_inputs_give_the_same_prompt_object_and_a_changed_input_a_new_prompt(tmp_path: Path) -> None:
    prompt, config = RequestPrompt(), SessionConfig(cwd=tmp_path)
    first = prompt.system(config, 1, ("echo",))
    assert prompt.system(config, 1, ("echo",)) is first
    assert prompt.system(config, 2, ("echo",)) is first  # a new turn with nothing changed
    assert "add" in prompt.system(config, 2, ("echo", "add"))
    planned = prompt.system(config.replace(permission_mode="plan"), 2, ("echo",))
    assert planned == first  # the mode travels in the prompt: the cached prefix stays (mode_blocks)
    assert prompt.system(config.replace(), 2, ("echo",)) == first  # equal settings, new object: equal text


def test_a_rules_file_edit_applies_from_the_next_turn_not_within_one(tmp_path: Path) -> None:
    prompt, config = RequestPrompt(), SessionConfig(cwd=tmp_path)
    rules = tmp_path / "AGENTS.md"
    rules.write_text("Use metric units.\n", encoding="utf-8")
    assert "metric units" in prompt.system(config, 1, ())
    rules.write_text("Use imperial units.\n", encoding="utf-8")
    os.utime(rules, ns=(1, 1))  # a new stat key even on coarse timestamps
    assert "metric units" in prompt.system(config, 1, ())  # the same turn: looked at once
    assert "imperial units" in prompt.system(config, 2, ())


def test_tool_definitions_are_built_once_per_tool_object() -> None:
    prompt, echo = RequestPrompt(), Echo()
    first = prompt.definitions([echo, Add()])
    again = prompt.definitions([echo])
    assert again[0] is first[0] and first[0]["name"] == "echo" and "input_schema" in first[0]
    assert prompt.definitions([Echo()])[0] is not first[0]  # another object: its own definition


def test_a_tool_no_longer_offered_is_not_kept_alive_by_the_definitions() -> None:
    prompt, echo = RequestPrompt(), Echo()
    for _ in range(50):  # e.g. a tool made anew for each request
        gone = Add()
        prompt.definitions([echo, gone])
    ref = weakref.ref(gone)
    kept = prompt.definitions([echo])
    del gone
    gc.collect()
    assert ref() is None and len(prompt._definitions) == 1 and kept[0]["name"] == "echo"


def test_tool_definitions_are_redacted_once_per_sanitizer_not_at_each_request() -> None:
    """An MCP server's description may name its token: each definition goes through the request's
    sanitizer, which walked every schema's strings at each request (~0.1 ms a request)."""
    from nbagent.engine.loop.sanitize import Sanitizer

    class Leaky(Echo):
        description = "Echoes; authenticates with tok-Qw7Lm3Np5Rt8Vy2Kb6Hd4"

    prompt, tool = RequestPrompt(), Leaky()
    sanitizer = Sanitizer(("tok-Qw7Lm3Np5Rt8Vy2Kb6Hd4",))
    first = prompt.definitions([tool], sanitizer)
    assert "tok-Qw7" not in str(first) and "[redacted]" in str(first[0]["description"])
    assert prompt.definitions([tool], sanitizer)[0] is first[0]  # the same sanitizer: not walked again
    other = Sanitizer(("Echoes",))  # a secret changed: a new sanitizer, redacted again
    assert str(prompt.definitions([tool], other)[0]["description"]).startswith("[redacted]")
