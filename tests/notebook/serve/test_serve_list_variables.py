"""A client's ``list_variables`` gets the variables as a prompt's kernel context describes them, in
the budget a prompt has (``kernel_context_tokens``), all of it for variables: the recent cells,
which a prompt also carries, are not sent to the client and must not use its budget. What was left
out is said with the client's own tools (it has no ``python`` tool)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from IPython.core.interactiveshell import InteractiveShell

from nbagent.notebook.document.bridge import Bridge
from nbagent.notebook.serve.clients import Clients
from nbagent.notebook.serve.gate import ServeGate
from nbagent.notebook.serve.operations import Operations
from nbagent.notebook.serve.record import ActionLog
from tests.notebook.document.fake_frontend import FakeFrontEnd
from tests.notebook.kernel_context.support import shell_with

from .test_serve_grants import AnsweringPanel

FRAMES = {f"frame{i}": pd.DataFrame(np.zeros((3, 30)), columns=[f"col_{j}" for j in range(30)]) for i in range(40)}
LONG_CELL = "\n".join(f"result_{i} = compute_something_long(argument_{i}, other_{i})" for i in range(200))


async def _alive() -> bool:
    return True


def _listed(shell: Any, tokens: int = 3_000, names: list[str] | None = None) -> list[str]:
    ops = Operations(FakeFrontEnd([]).connect(Bridge()), ServeGate(AnsweringPanel(), lambda: "default", _alive,
                                                                   lambda _t: True),
                     ActionLog(lambda: None), InteractiveShell.instance(), context_tokens=lambda: tokens)
    return ops.variables(Clients().admit(("claude-code", "s1")), shell, names or []).splitlines()


def test_recent_cells_the_client_never_gets_do_not_take_its_variables_budget() -> None:
    quiet = _listed(shell_with(**FRAMES))
    busy = _listed(shell_with((LONG_CELL,) * 5, **FRAMES))
    assert len(busy) == len(quiet) and busy[-1].startswith("Left out")
    assert "list_variables" in busy[-1] and "python tool" not in busy[-1]


def test_the_users_kernel_context_budget_holds_for_list_variables() -> None:
    def described(tokens: int) -> int:
        return len([line for line in _listed(shell_with(**FRAMES), tokens) if line.startswith("frame")])

    assert described(3_000) < len(FRAMES) == described(12_000)


def test_a_name_that_is_not_in_the_namespace_is_said() -> None:
    # A typo ("sales_df" for "sales") was silently left out: the client could not tell it from a
    # variable the budget left out or one it had not asked for.
    listed = _listed(shell_with(sales=pd.DataFrame({"x": [1]})), names=["sales_df", "sales"])
    assert listed[0].startswith("sales: DataFrame") and listed[-1] == "Not in the kernel's namespace: sales_df."


def test_list_variables_leaves_no_hook_on_the_shell() -> None:
    # Each call registered a post_run_cell watcher of the last error, never removed: after a client's
    # 50 calls every cell ran 50 more callbacks (each formatting a failed cell's traceback).
    shell = InteractiveShell.instance()
    hooks = len(shell.events.callbacks["post_run_cell"])
    for _ in range(3):
        _listed(shell)
    assert len(shell.events.callbacks["post_run_cell"]) == hooks
