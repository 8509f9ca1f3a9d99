"""The demo brain: a small, deterministic rule set that behaves like an agent on notebook tools.

It is not a language model and says so in everything it writes. From the user's latest prompt it
makes a *plan* of tool calls (read the files named, inspect the variables named, compute the
arithmetic asked), carries it out one call per turn, and then summarises the tool results it got
back. Because the plan is recomputed from the history on every request, it needs no state and
multi-turn tool use (inspect, then compute) falls out naturally.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from nbagent.engine.loop.facts import FACTS_TAG
from nbagent.engine.loop.structured import FINAL_ANSWER_TOOL, INSTRUCTION, NUDGE
from nbagent.engine.state.compactions import SUMMARY_MARK

from . import frames
from .answer import fill_schema
from .script import Reply, text_reply, tool_reply

PREFIX = "(simulated model)"

_FILE = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)*[\w-][\w.-]*\.(?:csv|tsv|txt|md|json|jsonl|py|log|ya?ml|toml|ini|xml|html))\b")
_BACKTICKED = re.compile(r"`([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)`")
_COMMON_NAMES = re.compile(r"\b(df|data|dataset|frame|table|arr|array|result)\b")
# Numbers joined by at least one operator; `x`/`×` between numbers mean times, `^` means power.
# A minus needs spaces around it, so that dates and ranges (2024-01-05) are not taken for sums.
_ARITHMETIC = re.compile(r"[-(]*\d+(?:\.\d+)?\)*(?:(?:\s*(?:\*\*|[+*/%^x×])\s*|\s+-\s+)[-(]*\d+(?:\.\d+)?\)*)+")
_STATS = {"mean": "mean", "average": "mean", "sum": "sum", "total": "sum", "max": "max", "maximum": "max",
          "min": "min", "minimum": "min", "median": "median"}


@dataclass(frozen=True)
class Step:
    """One planned tool call and the reason the brain gives for it."""

    tool: str
    input: Mapping[str, Any]
    why: str


def _text_of(content: Any, results: bool = True) -> str:
    """The text of a message's content; with ``results`` False, tool results are left out."""
    if isinstance(content, str):
        return content
    parts = []
    for block in content or ():
        if isinstance(block, Mapping):
            if block.get("type") == "text":
                parts.append(str(block.get("text", "")))
            elif block.get("type") == "tool_result" and results:
                parts.append(_text_of(block.get("content", "")))
    return "\n".join(parts)


# Blocks the loop adds to a prompt's message that are context, not the user's words: a compaction's
# summary, and kernel facts sent as ``<kernel-state>`` blocks (newer loops send them that way).
_NOT_THE_PROMPT = (SUMMARY_MARK, f"<{FACTS_TAG}")


def _prompt_text(message: Mapping[str, Any]) -> str:
    """The user's words in a message: its text blocks, without the loop's structured-output asks,
    a compaction's summary or kernel facts (which share the message of the prompt)."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    return "\n".join(str(b.get("text", "")) for b in content or () if isinstance(b, Mapping)
                     and b.get("type") == "text" and b.get("text") not in (INSTRUCTION, NUDGE)
                     and not str(b.get("text", "")).startswith(_NOT_THE_PROMPT))


def _tool_results(message: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    content = message.get("content")
    if isinstance(content, str):
        return []
    return [b for b in content or () if isinstance(b, Mapping) and b.get("type") == "tool_result"]


def _argument(tool: Mapping[str, Any], preferred: str) -> str:
    """The name of the tool's main argument: ``preferred`` if it has it, else its first required one."""
    schema = tool.get("input_schema") or {}
    props = schema.get("properties") or {}
    if preferred in props or not props:
        return preferred
    required = schema.get("required") or list(props)
    return str(required[0])


def _inspect_code(name: str) -> str:
    return (f"print(type({name}).__name__, getattr({name}, 'shape', ''))\n"
            f"{name}.head() if hasattr({name}, 'head') else {name}")


def _stat_code(name: str, stat: str) -> str:
    if stat == "median":
        plain = f"__import__('statistics').median({name})"
    elif stat == "mean":
        plain = f"sum({name}) / len({name})"
    else:
        plain = f"{stat}({name})"
    return f"{name}.{stat}(numeric_only=True) if hasattr({name}, 'select_dtypes') else {plain}"


def plan(prompt: str, tools: Mapping[str, Mapping[str, Any]]) -> list[Step]:
    """The tool calls the brain will make for ``prompt``, in order, given the tools offered."""
    steps: list[Step] = []
    if "read_file" in tools:
        arg = _argument(tools["read_file"], "path")
        for path in dict.fromkeys(_FILE.findall(prompt)):
            steps.append(Step("read_file", {arg: path}, f"read {path}"))
    if "python" in tools:
        arg = _argument(tools["python"], "code")
        # File names are not variables: `data.csv` must not make `data` a name to inspect.
        words = _FILE.sub(" ", prompt)
        names = _BACKTICKED.findall(words)
        names += [n for n in _COMMON_NAMES.findall(words) if n not in names]
        stats = [s for w, s in _STATS.items() if re.search(rf"\b{w}\b", prompt, re.I)]
        asked = frames.intents(prompt)
        if "largest_group" in asked:  # "the largest total" is the group's total, not the column's
            stats = [s for s in stats if s not in ("sum", "max")]
        for name in dict.fromkeys(names):
            steps.append(Step("python", {arg: _inspect_code(name)}, f"inspect `{name}`"))
            for intent in asked:
                steps.append(Step("python", {arg: frames.code(name, intent, prompt)},
                                  f"compute the {intent.replace('_', ' ')} of `{name}`"))
            for stat in dict.fromkeys(stats):
                steps.append(Step("python", {arg: _stat_code(name, stat)}, f"compute the {stat} of `{name}`"))
        for expr in _ARITHMETIC.findall(prompt):
            code = re.sub(r"(?<=[\d)\s])[x×](?=[\s\d(-])", "*", expr.strip()).replace("^", "**")
            code = re.sub(r"(?<![\d.])0+(?=\d)", "", code)  # Python rejects leading zeros (007)
            steps.append(Step("python", {arg: f"print({code})"}, f"compute {expr.strip()}"))
    return steps


def _summary(results: Sequence[Mapping[str, Any]], names: Mapping[str, str]) -> str:
    """Every tool result of the run, led by the ``answer:`` lines the DataFrame code printed."""
    found = frames.answers([_text_of(r.get("content", "")) for r in results if not r.get("is_error")])
    lines = [f"{PREFIX} " + "; ".join(found) + "." if found else "", f"{PREFIX} Here is what the tools returned:"]
    lines = [ln for ln in lines if ln]
    for r in results:
        tool = names.get(str(r.get("tool_use_id")), "tool")
        text = _text_of(r.get("content", "")).strip() or "(no output)"
        if len(text) > 400:
            text = text[:400] + " …"
        verb = "failed" if r.get("is_error") else "returned"
        lines.append(f"- `{tool}` {verb}:\n{text}")
    return "\n".join(lines)


COMPACT_SYSTEM_TAG = "nbagent-compaction:"
_HEADER = re.compile(r"^--- message (\d+) \((\w+)\) ---$", re.M)


def simulated_summary(request: Mapping[str, Any]) -> str:
    """A deterministic stand-in for a summary: the first line of each summarised message."""
    messages = request.get("messages") or [{}]
    text = _text_of(messages[-1].get("content"))
    parts = _HEADER.split(text)
    lines = [f"{PREFIX} Summary (simulated: the first line of each earlier message):"]
    for i in range(1, len(parts) - 2, 3):
        first = next((ln.strip() for ln in parts[i + 2].splitlines() if ln.strip()), "(empty)")
        lines.append(f"- {parts[i + 1]} {parts[i]}: {first[:160]}")
    return "\n".join(lines)


class DemoBrain:
    """The offline default responder (see the module docstring). Call it with a request body."""

    def __call__(self, request: dict[str, Any]) -> Reply:
        if COMPACT_SYSTEM_TAG in str(request.get("system") or ""):
            return text_reply(simulated_summary(request))
        tools = {str(t.get("name")): t for t in request.get("tools") or () if isinstance(t, Mapping)}
        messages = [m for m in request.get("messages") or () if isinstance(m, Mapping)]
        prompt_at = self._prompt_index(messages)
        prompt = _prompt_text(messages[prompt_at]) if prompt_at is not None else ""
        steps = plan(prompt, tools)
        later = messages[prompt_at + 1:] if prompt_at is not None else []
        done = sum(1 for m in later if m.get("role") == "assistant"
                   and set(self._tool_names(m).values()) - {FINAL_ANSWER_TOOL})
        if done < len(steps):
            step = steps[done]
            return tool_reply(step.tool, dict(step.input), text=f"{PREFIX} I will {step.why}.")
        if FINAL_ANSWER_TOOL in tools:
            return self._final_answer(tools[FINAL_ANSWER_TOOL], prompt, later)
        if later and messages[-1].get("role") == "user" and _tool_results(messages[-1]):
            names: dict[str, str] = {}
            for m in later:
                names.update(self._tool_names(m))
            return text_reply(_summary([r for m in later for r in _tool_results(m)], names))
        return text_reply(self._explain(prompt, tools), thinking=f"{PREFIX} No rule matched; explaining myself.")

    @staticmethod
    def _prompt_index(messages: Sequence[Mapping[str, Any]]) -> int | None:
        """The last user message that is a prompt (not just tool results or the loop's reminders)."""
        for i in range(len(messages) - 1, -1, -1):
            m = messages[i]
            if m.get("role") == "user" and _prompt_text(m).strip():
                return i
        return None

    def _final_answer(self, tool: Mapping[str, Any], prompt: str, later: Sequence[Mapping[str, Any]]) -> Reply:
        """Call ``final_answer`` with its schema filled from the prompt and the tool results
        (:mod:`.answer`); an answer that failed validation is given again, unchanged."""
        names: dict[str, str] = {}
        for m in later:
            names.update(self._tool_names(m))
        results = [_text_of(r.get("content", "")) for m in later for r in _tool_results(m)
                   if names.get(str(r.get("tool_use_id"))) != FINAL_ANSWER_TOOL]
        answer = fill_schema(tool.get("input_schema") or {}, prompt, results)
        return tool_reply(FINAL_ANSWER_TOOL, answer, text=(
            f"{PREFIX} My final answer, simulated: the schema filled in order with the numbers and quoted "
            f"or capitalised words of your prompt and the tool results."))

    @staticmethod
    def _tool_names(message: Mapping[str, Any]) -> dict[str, str]:
        content = message.get("content")
        if isinstance(content, str):
            return {}
        return {str(b.get("id")): str(b.get("name")) for b in content or ()
                if isinstance(b, Mapping) and b.get("type") == "tool_use"}

    @staticmethod
    def _explain(prompt: str, tools: Mapping[str, Any]) -> str:
        understood = " ".join(prompt.split())
        if len(understood) > 200:
            understood = understood[:200] + " …"
        offered = ", ".join(f"`{t}`" for t in tools) or "none"
        return (
            f"{PREFIX} I am nbagent's offline stand-in for Claude, not a real language model, so I "
            f"only follow a few fixed rules. I understood your message as: \"{understood}\". "
            f"Tools offered: {offered}. Try naming a variable in backticks (e.g. `df`), a file such "
            f"as data.csv, or arithmetic such as 17 * 23."
        )
