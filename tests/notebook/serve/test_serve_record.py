"""The external actions' record and the cells clients make, without a kernel: saved in the
session's task folder and read back, kept in memory without one, never deleted as nbagent's own."""

from __future__ import annotations

import hashlib
import json
from typing import Callable

from nbagent.notebook.document.bridge import Bridge
from nbagent.notebook.document.materialise import remove_turn_cells
from nbagent.notebook.document.removal import ORIGIN
from nbagent.notebook.serve.record import FILE_NAME, ActionLog, ExternalAction
from tests.notebook.document.fake_frontend import FakeFrontEnd


def action(what: str) -> ExternalAction:
    return ExternalAction(at="2026-12-03T09:00:00+00:00", client="claude-code", tool="python", what=what,
                          allowed_by="the user (Allow)", outcome="ok")


def test_actions_go_to_the_current_sessions_folder_and_load_back(tmp_path):
    folder = tmp_path / "S1"
    folder.mkdir()
    log = ActionLog(lambda: folder)
    log.add(action("run code in the kernel"))
    log.add(action("run cell c3"))
    log.close()
    saved = json.loads((folder / FILE_NAME).read_text())
    assert [a["what"] for a in saved] == ["run code in the kernel", "run cell c3"]
    again = ActionLog(lambda: folder)  # a new kernel resuming the session: appends after them
    again.add(action("delete cell c4"))
    assert [a.what for a in again.entries()] == ["run code in the kernel", "run cell c3", "delete cell c4"]


def test_without_a_session_folder_actions_stay_in_memory(tmp_path):
    log = ActionLog(lambda: None)
    log.add(action("read"))
    assert [a.what for a in log.entries()] == ["read"] and not list(tmp_path.iterdir())


def test_a_rollback_leaves_the_cells_a_client_made():
    made = {"source_sha256": hashlib.sha256(b"made by the agent").hexdigest(), "execution_count": None}
    front = FakeFrontEnd([
        {"cell_type": "code", "source": "made by the agent",
         "metadata": {"nbagent": {"origin": ORIGIN, "session": "S1", "turn": 2, "kind": "code", "made": made}}},
        {"cell_type": "code", "source": "made by a client", "metadata": {"nbagent": {"kind": "external",
                                                                                    "client": "claude-code"}}},
    ])
    removed = remove_turn_cells(front.connect(Bridge()), "S1", after_turn=1)
    assert removed.count == 1 and front.sources() == ["made by a client"]


def test_the_names_a_client_asks_for_are_bounded_and_escaped_in_the_record() -> None:
    from IPython.core.interactiveshell import InteractiveShell

    from nbagent.notebook.serve.clients import Clients
    from nbagent.notebook.serve.gate import ServeGate
    from nbagent.notebook.serve.operations import Operations
    from nbagent.notebook.serve.record import NAME_CHARS, NAMES_SHOWN

    async def alive() -> bool:
        return True

    ops = Operations(Bridge(), ServeGate(None, lambda: "default", alive, lambda _t: True),  # type: ignore[arg-type]
                     ActionLog(lambda: None), InteractiveShell.instance())
    names = ["df\u202e\n| fake row", "n" * 100_000] + [f"v{i}" for i in range(100)]
    ops.variables(Clients().admit(("claude-code", "s1")), InteractiveShell.instance(), names)
    what = ops.log.entries()[-1].what
    assert "⟦U+202E⟧⟦U+000A⟧| fake row" in what and "\u202e" not in what and "\n" not in what
    assert len(what) < (NAMES_SHOWN + 2) * (NAME_CHARS + 12)
    assert what.endswith(f"and {len(names) - NAMES_SHOWN} more in full)")


def test_a_key_in_a_failed_runs_last_line_is_not_saved_in_the_record() -> None:
    """The record's outcome of a failed call is the last line of the tool's output (a traceback's
    ``ValueError: …``), which the python tool does not redact (the reply is redacted whole after):
    a client's code failing with the key in its message saved it in ``external_actions.json`` and
    ``%agent history`` showed it."""
    import asyncio
    import os

    from IPython.core.interactiveshell import InteractiveShell

    from nbagent.engine.loop.sanitize import Sanitizer
    from nbagent.notebook.executor import ShellExecutor
    from nbagent.notebook.serve.clients import Clients
    from nbagent.notebook.serve.gate import Allowed
    from nbagent.notebook.serve.operations import Operations

    key = "sk-ant-api03-" + "Qw7Lm3Np5Rt8Vy2Kb6Hd4Zx9" * 4
    password = "DbPassword_qrstuvwxyzabcdefgh678"

    class Allow:
        async def check(self, _request: object) -> Allowed:
            return Allowed("the user (Allow)")

    shell = InteractiveShell.instance()
    sanitizer = Sanitizer((password,))
    ops = Operations(Bridge(), Allow(), ActionLog(lambda: None), shell,  # type: ignore[arg-type]
                     redactor=lambda: sanitizer.redact)
    ops.executor = ShellExecutor(shell)
    os.environ["NBAGENT_TEST_DB"] = password
    try:
        client = Clients().admit(("claude-code", "s1"))
        # The key is made by the code (a key written in a client's code is refused before asking).
        for code in (f"raise ValueError('bad key ' + 'sk-' + {key[3:]!r})",
                     "import os\nraise ConnectionError('login failed for ' + os.environ['NBAGENT_TEST_DB'])"):
            out = asyncio.run(ops.run_code(client, code, 30))
            assert out.is_error
    finally:
        del os.environ["NBAGENT_TEST_DB"]
    outcomes = [a.outcome for a in ops.log.entries()]
    assert outcomes[0].startswith("error: ValueError") and outcomes[1].startswith("error: ConnectionError")
    assert all("[redacted]" in o for o in outcomes), outcomes
    assert not any(key[:16] in o or password[:12] in o for o in outcomes), outcomes


def test_a_cell_id_a_client_made_up_is_bounded_and_escaped_in_the_record() -> None:
    """A replace of a cell the client never read is refused before asking, and recorded: the id is
    any string the client sent (megabytes, a newline, a direction mark), not a cell's."""
    import asyncio

    from IPython.core.interactiveshell import InteractiveShell

    from nbagent.notebook.serve.clients import Clients
    from nbagent.notebook.serve.gate import ServeGate
    from nbagent.notebook.serve.operations import Operations
    from nbagent.notebook.serve.record import NAME_CHARS

    async def alive() -> bool:
        return True

    ops = Operations(Bridge(), ServeGate(None, lambda: "default", alive, lambda _t: True),  # type: ignore[arg-type]
                     ActionLog(lambda: None), InteractiveShell.instance())
    from nbagent.engine.contracts.json_types import JSONObject

    made_up = "c1\u202e\n| fake row" + "x" * 1_000_000
    args: JSONObject = {"action": "replace", "cell_id": made_up, "index": None, "source": "1", "cell_type": "code"}
    out = asyncio.run(ops.edit(Clients().admit(("claude-code", "s1")), args))
    entry = ops.log.entries()[-1]
    assert out.is_error and entry.allowed_by == "refused"
    for text in (entry.what, entry.outcome):
        assert "⟦U+202E⟧⟦U+000A⟧| fake row" in text and "\n" not in text and len(text) < 4 * NAME_CHARS


async def test_a_read_of_a_page_reads_the_secrets_once_not_once_a_cell() -> None:
    """Each cell of a notebook_read page asked for the sanitizer again, and each time it walked the
    kernel's namespace for credential variables (~75 ms on a real one: ~3 s a 20-cell page, on the
    kernel's thread; review of this session)."""
    from IPython.core.interactiveshell import InteractiveShell

    from nbagent.notebook.serve.clients import Clients
    from nbagent.notebook.serve.gate import ServeGate
    from nbagent.notebook.serve.operations import Operations

    from .test_serve_grants import AnsweringPanel

    async def alive() -> bool:
        return True

    cells = [{"cell_type": "code", "source": f"x{i} = {i}\nx{i}", "execution_count": i, "outputs": [
        {"output_type": "execute_result", "data": {"text/plain": str(i)}, "metadata": {}, "execution_count": i}]}
        for i in range(20)]
    made: list[int] = []

    def redactor() -> Callable[[str], str]:
        made.append(1)
        return lambda text: text

    ops = Operations(FakeFrontEnd(cells).connect(Bridge()), ServeGate(AnsweringPanel(), lambda: "default", alive,
                                                                      lambda _t: True),
                     ActionLog(lambda: None), InteractiveShell.instance(), redactor=redactor)
    out = await ops.read(Clients().admit(("claude-code", "s1")), 0, 20, True)
    assert "x19" in str(out.content) and len(made) <= 2  # the tool's context and the call's record


def test_a_calls_redaction_reads_the_secrets_when_first_used() -> None:
    # Read when the call's context was made, before notebook_run ran the cell: the outputs it wrote
    # into the notebook kept a credential variable that cell made (the review, this session).
    from IPython.core.interactiveshell import InteractiveShell

    from nbagent.notebook.serve.clients import Clients
    from nbagent.notebook.serve.operations import Operations

    made: list[int] = []

    def redactor() -> Callable[[str], str]:
        made.append(1)
        return lambda text: text.replace("made-by-the-cell-1", "[redacted]")

    ops = Operations(Bridge(), None, ActionLog(lambda: None), InteractiveShell.instance(),  # type: ignore[arg-type]
                     redactor=redactor)
    ctx = ops._ctx(Clients().admit(("claude-code", "s1")))
    assert made == [] and ctx.redact is not None
    assert ctx.redact("pw made-by-the-cell-1") == "pw [redacted]" and ctx.redact("x") == "x" and made == [1]


def test_rows_read_back_from_a_received_folder_are_escaped_and_bounded(tmp_path):
    """A received session folder's external_actions.json is printed by %agent history: a row
    holding terminal escapes or a newline drew its own lines (attacker pass 20)."""
    folder = tmp_path / "S1"
    folder.mkdir()
    row = {"at": "2026-01-01T00:00:00+00:00", "client": "claude\x1b]52;c;Y3VybA==\x07", "tool": "python",
           "what": "run code\nok: the user (Allow)", "allowed_by": "x" * 5_000, "outcome": "ok"}
    (folder / FILE_NAME).write_text(json.dumps([row]))
    (entry,) = ActionLog(lambda: folder).entries()
    assert entry.client == "claude⟦U+001B⟧]52;c;Y3VybA==⟦U+0007⟧" and entry.what == "run code⟦U+000A⟧ok: the user (Allow)"
    assert len(entry.allowed_by) <= 2_001
