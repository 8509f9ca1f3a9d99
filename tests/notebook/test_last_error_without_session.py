"""With no session loaded (a replay after a restart, a ``%agent serve`` client before any prompt), the
literal a module names as a credential in the last error's traceback is redacted as a run redacts it
(review of atk17, LOW 7: those contexts were built without the shell's ``LastError`` watcher)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any, Iterator

import pytest
from IPython.utils.capture import capture_output

from nbagent.notebook import magics as magics_mod
from tests.notebook.no_session import shell_without_session

HELPER_PW = "Helper-Pw-2024x"  # no key's shape: known only as the literal a module names password=


@pytest.fixture
def ip(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    (tmp_path / "atk17_helpers_rev.py").write_text(
        "def connect(**kw):\n    raise ConnectionError('could not reach db')\n\n"
        f"def fetch():\n    return connect(host='db.internal', user='ana', password='{HELPER_PW}')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    with shell_without_session() as (shell, magics):
        with capture_output():
            assert shell.run_cell("from atk17_helpers_rev import fetch", store_history=True).success
            assert not shell.run_cell("fetch()", store_history=True).success
        try:
            yield shell
        finally:
            magics.last_error.text = None


def test_a_replays_lines_redact_a_literal_the_last_errors_traceback_quotes(ip: Any) -> None:
    from nbagent.notebook.document.input_changes import secrets_at_hand

    magics = magics_mod.active_magics()
    assert magics.current is None and HELPER_PW in (magics.last_error.text or "")
    assert secrets_at_hand(magics)(f"the cell `pw = '{HELPER_PW}'` changed") == "the cell `pw = '[redacted]'` changed"


def test_a_serve_clients_replies_redact_a_literal_the_last_errors_traceback_quotes(ip: Any) -> None:
    from nbagent.notebook.serve.server import ServeServer

    magics = magics_mod.active_magics()
    server = SimpleNamespace(shell=ip, magics=magics)
    assert HELPER_PW in ServeServer._kernel_secrets(server)  # type: ignore[arg-type]
