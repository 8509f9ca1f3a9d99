"""What the python tool's code displayed reaches its card (the run's transcript, saved in the
notebook and in its record) with the session's secrets redacted: it was shown as displayed, so
``display(df)`` of a frame holding a key put the key in the card's table and the saved notebook."""

from __future__ import annotations

from types import SimpleNamespace

import pandas as pd

from nbagent.engine.contracts import events as ev
from nbagent.engine.loop.sanitize import Sanitizer
from nbagent.notebook.document.cell_run import execution_shown
from nbagent.notebook.executor import ExecutionRecord
from nbagent.notebook.view import AgentView
from nbagent.tools.executor import ExecutionResult

KEY = "sk-ant-api03-" + "Qw7Lm3Np5Rt8Vy2Kb6Hd4Zx9" * 4
PASSWORD = "Tr0ub4dor&3<horse>"  # pandas' HTML writes it "Tr0ub4dor&amp;3&lt;horse&gt;"


def test_a_secret_the_code_displayed_is_redacted_in_its_card_and_transcript() -> None:
    view = AgentView(model="claude-sonnet-4-5", provider="simulated", context_window=200_000, max_allowed=160_000)
    sanitizer = Sanitizer((KEY, PASSWORD))
    sess = SimpleNamespace(agent=SimpleNamespace(engine=SimpleNamespace(sanitizer_after_code=lambda: sanitizer)))
    code = "display(creds)\ncreds.style"
    view.handle(ev.ToolUse(tool_use_id="t1", name="python", input={"code": code}))
    creds = pd.DataFrame({"service": ["api", "db"], "secret": [KEY, PASSWORD]})
    displayed = {"data": {"text/html": creds.to_html(), "text/plain": repr(creds)}, "metadata": {}}
    styled = {"text/html": creds.style.to_html(), "text/plain": "<Styler>"}
    execution_shown(view, sess)(ExecutionRecord(code, ExecutionResult(rich=styled), 0.0, 0.1, (displayed,)))  # type: ignore[arg-type]
    shown = view.transcript() + view.static_html()
    assert "[redacted]" in shown
    for piece in (KEY[:16], KEY[-16:], "Tr0ub4dor", "horse"):
        assert piece not in shown, piece
