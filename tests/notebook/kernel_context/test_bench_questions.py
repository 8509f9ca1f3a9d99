"""The bench's 20 schema questions: every fact each answer needs is in the request, within the
default budget (the bench reports the timings; this keeps the facts from regressing)."""

from __future__ import annotations

import functools
from types import ModuleType

import pytest

from nbagent.engine.api_facts.tokens import count_text_tokens
from nbagent.engine.contracts.config import DEFAULT_KERNEL_CONTEXT_TOKENS
from nbagent.notebook.kernel_context import build, guard, protocol
from tests.bench_module import load_bench


def bench() -> ModuleType:
    return load_bench("bench_kernel_context")


def test_every_schema_question_finds_its_facts_in_the_request_within_the_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    # The facts, not the clock: the build's time limits are wall time, and a loaded CI worker (a
    # full collection of its heap, another process on the core) once took f4 past 0.5 s, which
    # left its levels out. What the limits do is tested in test_hostile_objects.py.
    monkeypatch.setattr(protocol, "bounded_call", functools.partial(guard.bounded_call, seconds=60.0))
    monkeypatch.setattr(build, "Deadline", functools.partial(guard.Deadline, 120.0))
    b = bench()
    ns = b.namespace()
    shell, displayed = b.shell_for(ns)
    assert len(b.QUESTIONS) == 20
    for q in b.QUESTIONS:
        text, image_tokens, _, _ = b.build(b.KernelContext(shell, None, displayed), q.prompt)
        needed = q.facts(ns)
        assert needed and not [f for f in needed if f not in text], (q.prompt, [f for f in needed if f not in text])
        assert count_text_tokens(text) <= DEFAULT_KERNEL_CONTEXT_TOKENS
        assert (image_tokens > 0) == q.image, q.prompt
    before = b.before(ns)
    assert sum(all(f in before for f in q.facts(ns)) for q in b.QUESTIONS) == 0
