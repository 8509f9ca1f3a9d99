"""The demo brain: a small, deterministic rule set that behaves like an agent on notebook tools.

It is not a language model and says so in everything it writes. From the user's latest prompt and
the kernel facts it makes a *plan* of tool calls (:mod:`.plan`: fix a misspelt name in a failed
cell, load a table with pandas, read the files named, answer DataFrame questions, plot, compute the
arithmetic asked), carries it out one call per turn, and then summarises the tool results it got
back (:mod:`.summary`). Because the plan is recomputed from the history on every request, it needs
no state and multi-turn tool use (inspect, then compute) falls out naturally.
"""

from __future__ import annotations

import json
from typing import Mapping, Sequence

from ...engine.contracts.json_types import JSONValue
from .answer import Schema, fill_schema
from .messages import MessageLike, calls_in, kernel_view, output_schema, prompt_text, text_of, tool_results
from .plan import plan
from .script import Reply, text_reply, tool_reply
from .step import Plan, Step, next_step
from .summary import PREFIX, answer, simulated_summary
from .validation import RequestBody

COMPACT_SYSTEM_TAG = "nbagent-compaction:"


class DemoBrain:
    """The offline default responder (see the module docstring). Call it with a request body."""

    def __call__(self, request: RequestBody) -> Reply:
        if COMPACT_SYSTEM_TAG in str(request.get("system") or ""):
            return text_reply(simulated_summary(request))
        tools = {str(t.get("name")): t for t in request.get("tools") or () if isinstance(t, Mapping)}
        messages: list[MessageLike] = [m for m in request.get("messages") or () if isinstance(m, Mapping)]
        prompt_at = self._prompt_index(messages)
        prompt = prompt_text(messages[prompt_at]) if prompt_at is not None else ""
        later = messages[prompt_at + 1:] if prompt_at is not None else []
        calls = calls_in(later)  # what it did in this turn; the facts up to the prompt only
        before = messages[:prompt_at + 1] if prompt_at is not None else []
        p = plan(prompt, tools, kernel_view(before), calls, calls_in(before))
        step = next_step(p.steps, calls)
        if step is not None:
            return tool_reply(step.tool, dict(step.input), text=f"{PREFIX} I will {step.why}.")
        schema = output_schema(messages[prompt_at]) if prompt_at is not None else None
        if schema is not None:
            return self._structured_answer(schema, prompt, later)
        if later and messages[-1].get("role") == "user" and tool_results(messages[-1]):
            return text_reply(answer(calls, p))
        if p.lead:
            return text_reply(f"{PREFIX} {p.lead}")
        return text_reply(self._explain(prompt, tools), thinking=f"{PREFIX} No rule matched; explaining myself.")

    @staticmethod
    def _prompt_index(messages: Sequence[MessageLike]) -> int | None:
        """The last user message that is a prompt (not just tool results or the loop's reminders)."""
        for i in range(len(messages) - 1, -1, -1):
            m = messages[i]
            if m.get("role") == "user" and prompt_text(m).strip():
                return i
        return None

    def _structured_answer(self, schema: Schema, prompt: str, later: Sequence[MessageLike]) -> Reply:
        """The prompt's schema filled from the prompt and the tool results (:mod:`.answer`), as a
        structured answer's one fenced JSON block after a line saying it is simulated; one not
        accepted is given again, unchanged."""
        results = [text_of(r.get("content", "")) for m in later for r in tool_results(m)]
        answer = json.dumps(fill_schema(schema, prompt, results), ensure_ascii=False)
        return text_reply(f"{PREFIX} My final answer, simulated: the schema filled in order with the numbers "
                          f"and quoted or capitalised words of your prompt and the tool results.\n"
                          f"```json\n{answer}\n```")

    @staticmethod
    def _explain(prompt: str, tools: Mapping[str, Mapping[str, JSONValue]]) -> str:
        understood = " ".join(prompt.split())
        if len(understood) > 200:
            understood = understood[:200] + " …"
        offered = ", ".join(f"`{t}`" for t in tools) or "none"
        return (
            f"{PREFIX} I am nbagent's offline stand-in for Claude, not a real language model, so I "
            f"only follow a few fixed rules. I understood your message as: \"{understood}\". "
            f"Tools offered: {offered}. Try naming a variable in backticks (e.g. `df`), a file such "
            f"as data.csv, \"load sales.csv\", \"plot sales by region\", arithmetic such as 17 * 23, "
            f"or %agent fix after a failed cell."
        )


__all__ = ["COMPACT_SYSTEM_TAG", "PREFIX", "DemoBrain", "Plan", "Step", "plan"]
