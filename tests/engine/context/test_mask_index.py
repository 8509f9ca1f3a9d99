"""The mask layer's incremental index answers what a walk of the whole history answers, whatever
happened to the session in between (growth, maskings, truncation, rollback, a merged prompt, a
compaction), and a request's work does not grow with the history."""

from __future__ import annotations

from typing import Any, Iterator

from hypothesis import given, settings
from hypothesis import strategies as st

from nbagent.engine.api_facts import tokens
from nbagent.engine.context import get_next_truncation_range
from nbagent.engine.context.mask import mask_old_results
from nbagent.engine.context.mask_index import ResultIndex
from nbagent.engine.context.updates import ContextHistoryUpdates
from nbagent.engine.context.window import start_of_rest
from nbagent.engine.contracts.context_policy import LayerOptions
from nbagent.engine.contracts.messages import MessageParam, blocks, is_tool_result, is_tool_use, tool_result_text

TOOLS = ("python", "read_file", "shell")


def walk(history: list[MessageParam], updates: ContextHistoryUpdates, rng: Any,
         options: LayerOptions) -> tuple[list[tuple[int, int, str, int]], int | None]:
    """The reference: the full walk masking did before the index (candidates, next start)."""
    names: dict[str, str] = {}
    start = start_of_rest(rng)
    found: list[tuple[int, int, str, str | None]] = []
    for i, message in enumerate(history):
        for j, block in enumerate(blocks(message)):
            if is_tool_use(block):
                names[str(block.get("id"))] = str(block.get("name", ""))
            elif i >= start and is_tool_result(block) and message.get("role") == "user":
                tool = names.get(str(block.get("tool_use_id")), "")
                if tool not in options.exclude:
                    replaced = updates.latest(i, j) is not None
                    found.append((i, j, tool, None if replaced else tool_result_text(block, "\n")))
    nxt = next((i for i, _, _, text in found if text), None)
    old = found[:-options.keep] if options.keep else found
    counted = [(i, j, tool, tokens.count_text_tokens(text) if text else 0) for i, j, tool, text in old]
    return [c for c in counted if c[3] > 0], nxt


def turn(n: int, calls: int, sizes: Iterator[int], names: Iterator[str]) -> list[MessageParam]:
    if not calls:
        return [{"role": "assistant", "content": [{"type": "text", "text": "thinking aloud"}]},
                {"role": "user", "content": [{"type": "text", "text": "go on"}]}]
    ids = [f"t{n}-{k}" for k in range(calls)]
    return [{"role": "assistant", "content": [{"type": "tool_use", "id": i, "name": next(names), "input": {}}
                                              for i in ids]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": i, "content": "data " * next(sizes)}
                                         for i in ids]}]


steps = st.lists(st.sampled_from(["grow", "grow", "grow", "mask", "truncate", "rollback", "merge", "compact",
                                  "tail"]), min_size=4, max_size=25)
options = st.builds(LayerOptions, keep=st.integers(0, 4), clear=st.integers(0, 3000),
                    exclude=st.sampled_from([(), ("python",), ("shell", "read_file")]))


@settings(max_examples=80, deadline=None)
@given(steps, options, st.lists(st.integers(0, 1200), min_size=60, max_size=60),
       st.lists(st.sampled_from(TOOLS), min_size=60, max_size=60), st.lists(st.integers(0, 3), min_size=30, max_size=30))
def test_the_index_answers_what_a_full_walk_answers_after_any_change(
        ops: list[str], opts: LayerOptions, sizes: list[int], names: list[str], calls: list[int]) -> None:
    size_it, name_it, call_it = iter(sizes * 10), iter(names * 10), iter(calls * 10)
    history: list[MessageParam] = [{"role": "user", "content": [{"type": "text", "text": "task"}]}]
    history += turn(0, 1, size_it, name_it)
    updates, rng, index = ContextHistoryUpdates(), None, ResultIndex()
    marks: list[tuple[int, float, Any]] = [(len(history), 0.0, None)]
    for ts, op in enumerate(ops, start=1):
        if op == "grow":
            history += turn(ts, next(call_it), size_it, name_it)
            marks.append((len(history), ts, rng))
        elif op == "mask":
            mask_old_results(history, updates, rng, opts, ts, None, index)
        elif op == "truncate" and len(history) > 6:
            rng = get_next_truncation_range(history, rng, "half")
        elif op == "rollback":
            length, at, rng = marks[len(marks) // 2]
            del history[length:]
            updates.truncate_after(at)
            del marks[len(marks) // 2 + 1:]
        elif op == "merge" and history[-1]["role"] == "user":  # a prompt merged into the last message
            history[-1] = {"role": "user", "content": [*blocks(history[-1]), {"type": "text", "text": "more"}]}
        elif op == "compact" and len(history) > 5:  # messages 2-3 replaced by one summary pair
            history[:] = [*history[:2], {"role": "user", "content": [{"type": "text", "text": "summary"}]},
                          *history[4:]]
            marks = [(min(m[0], len(history)), m[1], m[2]) for m in marks]
        elif op == "tail" and len(history) > 3:
            del history[-2:]
        expected, start = walk(history, updates, rng, opts)
        assert index.old_results(history, updates, rng, opts.exclude, opts.keep) == expected, op
        assert index.next_start(history, updates, rng, opts.exclude) == start, op


def test_a_request_tokenises_only_the_results_that_arrived_since_the_last_one(monkeypatch: Any) -> None:
    counted: list[str] = []
    real = tokens.count_text_tokens

    def counting(text: str) -> int:
        counted.append(text)
        return real(text)

    monkeypatch.setattr("nbagent.engine.context.mask_index.count_text_tokens", counting)
    history: list[MessageParam] = [{"role": "user", "content": [{"type": "text", "text": "task"}]}]
    it_sizes, it_names = iter([40] * 10_000), iter(["python"] * 10_000)
    for n in range(500):
        history += turn(n, 1, it_sizes, it_names)
    updates, index = ContextHistoryUpdates(), ResultIndex()
    index.old_results(history, updates, None, (), 3)
    first = len(counted)
    assert first == 497  # every result but the newest three, once
    history += turn(500, 2, it_sizes, it_names)
    counted.clear()
    assert len(index.old_results(history, updates, None, (), 3)) == 499
    assert len(counted) == 2  # the two results the new results pushed out of ``keep``
    mask_old_results(history, updates, None, LayerOptions(keep=3, clear=1), 1.0, None, index)
    counted.clear()
    history += turn(501, 1, it_sizes, it_names)
    assert index.next_start(history, updates, None, ()) == 1000  # turn 499's result: the newest three stay whole
    assert len(counted) <= 1
