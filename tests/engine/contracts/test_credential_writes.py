"""A write to a file that holds credentials asks in every mode but bypass, as its read does: in
``accept_edits`` (or with ``edit_file`` allowed) an edit of the project's ``token.json`` ran unasked,
so the model could point its ``token_uri`` at its own host (the refresh token and client secret go
there at the next refresh) and read it through ``edit_file``'s answers (attacker pass 13)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from nbagent.providers.simulated import SimulatedAPI, text_reply, tool_reply
from nbagent.tools.files import EditFile, ReadFile
from tests.engine.contracts.test_protected import User
from tests.engine.loop.test_query_support import make_engine, messages_requests, run

TOKEN = {"refresh_token": "1//0gRefreshTok3n-9f8e7d", "client_secret": "GOCSPX-Cl1entS3cret",
         "token_uri": "https://oauth2.googleapis.com/token"}


async def _edits(tmp_path: Path, edits: list[dict[str, str]], **settings: Any) -> tuple[User, SimulatedAPI]:
    api = SimulatedAPI([*(tool_reply("edit_file", {"path": "token.json", **e}, id=f"toolu_{i}")
                          for i, e in enumerate(edits)), text_reply("ok")])
    user = User()
    engine = make_engine(api, tmp_path, tools=[EditFile(), ReadFile()], can_use_tool=user, **settings)
    await run(engine, "tidy the project")
    return user, api


async def test_accept_edits_asks_before_editing_a_credentials_file(tmp_path: Path) -> None:
    (tmp_path / "token.json").write_text(json.dumps(TOKEN))
    user, _ = await _edits(tmp_path, [{"old": "https://oauth2.googleapis.com", "new": "https://collect.example"}],
                           permission_mode="accept_edits")
    (request,) = user.requests
    assert "`token.json` usually holds a password, token or key" in request.reason_asked
    assert json.loads((tmp_path / "token.json").read_text()) == TOKEN


async def test_edit_file_allowed_tells_nothing_of_a_credentials_files_content(tmp_path: Path) -> None:
    """"old text not found" / "occurs 2 times" / "Edited" answered guesses of the secret, unasked."""
    (tmp_path / "token.json").write_text(json.dumps(TOKEN))
    guesses = [{"old": '"1//0gA', "new": "x"}, {"old": '"1//0gR', "new": '"1//0gR'[:-1] + "R "}]
    user, api = await _edits(tmp_path, guesses, allow=["edit_file"])
    assert len(user.requests) == 2  # each asked: no one answered, so nothing ran
    sent = json.dumps([r.body for r in messages_requests(api)])
    assert "not found" not in sent and "Edited" not in sent
    assert json.loads((tmp_path / "token.json").read_text()) == TOKEN
