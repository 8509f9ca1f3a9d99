"""What a skill of the demo brain produces: the tool calls it plans, what it makes of their results,
and the calls of the current turn it already made."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Callable, Iterable, Mapping, Optional

from ...engine.contracts.json_types import JSONValue

ToolInput = Mapping[str, JSONValue]
"""A tool call's input (JSON)."""

Reader = Callable[[str], Optional[str]]
"""Turns a successful call's output text into one sentence of the answer (None: nothing to say)."""


@dataclass(frozen=True)
class Step:
    """One planned tool call, the reason the brain gives for it ("I will <why>."), and how it
    reads the output (``reads``) and a failure (``on_error``) into a sentence of the answer."""

    tool: str
    input: ToolInput
    why: str
    reads: Reader | None = None
    on_error: Reader | None = None
    shows: bool = False
    """The output is quoted in the answer even when read: a table the sentence only counts."""

    @property
    def key(self) -> str:
        return call_key(self.tool, self.input)


@dataclass(frozen=True)
class Call:
    """A tool call the brain made earlier in this turn, with the text of its result."""

    tool: str
    input: ToolInput
    output: str
    failed: bool

    @property
    def key(self) -> str:
        return call_key(self.tool, self.input)


@dataclass(frozen=True)
class Plan:
    """The tool calls for a prompt, plus what the final answer says around their results.

    ``lead`` is a conclusion reached before any tool ran (a fix's diagnosis, or what the brain
    could not resolve); ``code`` is a cell the answer ends with, offered only if the last python
    call that ran it succeeded.
    """

    steps: list[Step] = field(default_factory=list)
    lead: str = ""
    code: str = ""


def call_key(tool: str, tool_input: ToolInput) -> str:
    return tool + json.dumps(dict(tool_input), sort_keys=True, default=str)


def next_step(steps: Iterable[Step], calls: Iterable[Call]) -> Step | None:
    """The first planned step not made yet in this turn (each call accounts for one equal step)."""
    made: dict[str, int] = {}
    for c in calls:
        made[c.key] = made.get(c.key, 0) + 1
    for step in steps:
        if made.get(step.key, 0):
            made[step.key] -= 1
            continue
        return step
    return None


def argument(tool: Mapping[str, JSONValue], preferred: str) -> str:
    """The name of the tool's main argument: ``preferred`` if it has it, else its first required one."""
    schema = tool.get("input_schema") or {}
    props = (schema.get("properties") or {}) if isinstance(schema, dict) else {}
    if not isinstance(props, dict) or preferred in props or not props:
        return preferred
    required = schema.get("required") if isinstance(schema, dict) else None
    return str(required[0] if isinstance(required, list) and required else list(props)[0])


__all__ = ["Call", "Plan", "Reader", "Step", "ToolInput", "argument", "call_key", "next_step"]
