from __future__ import annotations

from typing import Any

import pytest

from nbagent.notebook import magics as magics_mod
from tests.notebook.document.test_replay_inprocess import FIRST, SECOND, agent, cell, ip, restart
from tests.notebook.document.test_replay_session_options import _local_endpoint

__all__ = ["ip"]
CODE = "s = __import__('nbagent').notebook.magics.active_magics().new_session(context_window=4000, endpoint='local')"


@pytest.mark.filterwarnings("ignore:nbagent has no prices")
@pytest.mark.parametrize("line", ["--endpoint local", ""])
def test_probe(ip: Any, tmp_path: Any, monkeypatch: pytest.MonkeyPatch, line: str) -> None:
    monkeypatch.setenv("JPY_SESSION_NAME", "analysis.ipynb")
    with _local_endpoint(monkeypatch, tmp_path) as api:
        ip.run_cell(CODE)
        cell(ip, FIRST, line)
        print("LIVE", agent().endpoint, agent().config.model, agent().config.context_window)
        restart(magics_mod.active_magics())
        ip.run_cell(CODE)
        cell(ip, FIRST, line)
        print("FILLED", agent().endpoint, agent().provider.name, agent().config.model)
        cell(ip, SECOND)
        print("AFTER", agent().endpoint, agent().provider.name, agent().config.model, agent().config.context_window)
    assert False
