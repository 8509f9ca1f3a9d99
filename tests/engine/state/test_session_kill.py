"""SIGKILL while a session saves (issue 4, test 6): ten processes each start saving a growing session
100 times and are killed at random moments; every task folder still loads, with
``SessionStore.load`` and ``QueryEngine.resume``, into a valid conversation."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from nbagent.engine.contracts.config import SessionConfig
from nbagent.engine.contracts.messages import history_problems
from nbagent.engine.loop.query import QueryEngine
from nbagent.engine.state.store import SessionStore

pytestmark = pytest.mark.skipif(not hasattr(os, "fork") or not hasattr(signal, "SIGKILL"),
                                reason="needs fork and SIGKILL")

# One driver process imports nbagent once and forks ten children (a single-threaded process forks
# safely). Each child saves a growing session through the engine's own persistence path — history,
# session.json, the context manager's updates and the event log — 100 times; the driver SIGKILLs it
# at a random moment and reports whether it was still saving.
DRIVER = textwrap.dedent("""
    import json, os, random, signal, sys, time
    from pathlib import Path
    from nbagent.engine.context.window import RequestUsage
    from nbagent.engine.api_facts.cost import Usage
    from nbagent.engine.contracts.events import ApiRequestStarted, RequestCompleted, RequestRecord
    from nbagent.engine.state.session import Session

    class Holder:
        pass

    def save_loop(task):
        engine = Holder()
        engine.session = Session(task)
        pad = "lorem ipsum " * 20
        for i in range(100):
            engine.session.history.append({"role": "user", "content": [{"type": "text", "text": f"q{i} {pad}"}]})
            engine.session.history.append({"role": "assistant", "content": [
                {"type": "text", "text": f"a{i}"}, {"type": "tool_use", "id": f"t{i}", "name": "x", "input": {"i": i}}]})
            engine.session.history.append(
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{i}", "content": "ok"}]})
            engine.session.history.append({"role": "assistant", "content": [{"type": "text", "text": f"done {i}"}]})
            engine.session.last_ts += 10
            if i % 10 == 5:
                n = len(engine.session.history) // 2
                engine.session.deleted_range = (2, n - 1 if n % 2 == 0 else n)
                engine.session.context.apply_truncation_notice(engine.session.last_ts, engine.session.history)
            usage = Usage(input_tokens=100 + i, output_tokens=10)
            engine.session.previous_usage = RequestUsage.from_usage(engine.session.last_ts, usage)
            record = RequestRecord(turn=i + 1, request=i + 1, model="claude-sonnet-5-5", usage=usage, cost_usd=0.001,
                                context_tokens=100 + i, max_allowed=1.0, context_window=2,
                                deleted_range=engine.session.deleted_range, keep=None, file_read_saving=None,
                                retries=0, stop_reason="end_turn", duration_s=0.1, ts=engine.session.last_ts)
            engine.session.records.append(record)
            engine.session.events += [ApiRequestStarted(turn=i + 1, request=i + 1), RequestCompleted(record=record)]
            engine.session.turn = i + 1
            engine.session.end_turn(i + 1)
            engine.session.save()
            if i == 0:
                os.write(1, b"r")

    root, seed = Path(sys.argv[1]), int(sys.argv[2])
    rng = random.Random(seed)
    killed = []
    for k in range(10):
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(r)
            os.dup2(w, 1)
            try:
                save_loop(root / f"task{k}")
            finally:
                os._exit(0)
        os.close(w)
        assert os.read(r, 1) == b"r"
        start = time.monotonic()
        time.sleep(rng.uniform(0.0, 0.15))
        os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
        os.close(r)
        killed.append(os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL)
    print(json.dumps(killed))
""")


class NoProvider:
    name = "none"


def test_sigkill_during_saves_never_leaves_an_unloadable_session(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[3])}
    out = subprocess.run([sys.executable, "-c", DRIVER, str(tmp_path), "6"], capture_output=True, text=True,
                         env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    killed = json.loads(out.stdout.strip().splitlines()[-1])
    assert sum(killed) >= 7, f"most kills should land while the child is still saving: {killed}"
    for task in (tmp_path / f"task{k}" for k in range(10)):
        snap = SessionStore(task).load()
        assert snap.history and len(snap.history) % 4 == 0
        assert history_problems(snap.history) == []
        assert snap.records and snap.marks
        rng_ = snap.deleted_range
        assert rng_ is None or rng_[1] < len(snap.history)
        engine = QueryEngine.resume(task, SessionConfig(cwd=tmp_path), provider=NoProvider())  # type: ignore[arg-type]
        assert engine.session.history == snap.history
        assert history_problems(engine.session.history) == []
        # What the model would be sent next is a valid conversation too.
        request = engine.session.context.get_truncated_messages(engine.session.history, engine.session.deleted_range)
        assert history_problems(request) == []
