"""What a skill of the demo brain produces: the tool calls it plans and what the answer adds."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping


@dataclass(frozen=True)
class Step:
    """One planned tool call and the reason the brain gives for it ("I will <why>.")."""

    tool: str
    input: Mapping[str, Any]
    why: str


@dataclass(frozen=True)
class Plan:
    """The tool calls for a prompt, plus what the final answer says around their results.

    ``lead`` is a conclusion reached before any tool ran (a fix's diagnosis); ``code`` is a cell
    the answer ends with, offered only if the last python call that ran it succeeded.
    """

    steps: list[Step] = field(default_factory=list)
    lead: str = ""
    code: str = ""


def argument(tool: Mapping[str, Any], preferred: str) -> str:
    """The name of the tool's main argument: ``preferred`` if it has it, else its first required one."""
    schema = tool.get("input_schema") or {}
    props = schema.get("properties") or {}
    if preferred in props or not props:
        return preferred
    required = schema.get("required") or list(props)
    return str(required[0])


__all__ = ["Plan", "Step", "argument"]
