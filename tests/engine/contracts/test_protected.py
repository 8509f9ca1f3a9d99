"""Files that configure or record nbagent always ask before a tool writes them (every mode but bypass),
with the reason shown; paths are resolved once (``~``, ``..``, symlinks) for the check, hooks and tool."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from nbagent.engine.contracts.events import PermissionAsked, ToolResult
from nbagent.engine.contracts.hooks import Hooks, ToolCall
from nbagent.engine.contracts.permissions import Allow, Deny, PermissionRequest
from nbagent.engine.contracts.protected import protected_reason
from nbagent.providers.simulated import SimulatedAPI, text_reply, tool_reply
from nbagent.tools.files import WriteFile
from tests.engine.loop.test_query_support import make_engine, run


def real(path: Path) -> Path:
    return path.resolve()


class User:
    """A ``can_use_tool`` that records each request and answers ``answer``."""

    def __init__(self, answer: Any = None) -> None:
        self.answer = answer or Deny("no")
        self.requests: list[PermissionRequest] = []

    async def __call__(self, name: str, tool_input: dict, request: PermissionRequest) -> Any:
        self.requests.append(request)
        return self.answer


async def write_with(tmp_path: Path, path: str, *, user: User | None = None, hooks: Any = None,
                     **settings: Any) -> tuple[list[Any], Any]:
    """One ``write_file`` of ``path`` through the loop; the events and the engine."""
    api = SimulatedAPI([tool_reply("write_file", {"path": path, "content": "evil"}, id="toolu_w"), text_reply("ok")])
    settings.setdefault("permission_mode", "accept_edits")
    engine = make_engine(api, tmp_path, tools=[WriteFile()], can_use_tool=user, **settings)
    engine.hooks = Hooks.from_mapping(hooks)
    return await run(engine, "write it"), engine


@pytest.mark.parametrize("target,shown", [
    (".mcp.json", "`.mcp.json` configures nbagent's MCP servers"),
    ("AGENTS.md", "`AGENTS.md` holds rules nbagent sends in its system prompt"),
    (".nbagent/rules/style.md", "inside `.nbagent/`, which configures nbagent"),
    ("task/history.jsonl", "inside this session's task folder"),
    ("sub/../AGENTS.md", "`AGENTS.md`"),
    ("ipython_config.py", "configures the IPython kernel"),
])
async def test_accept_edits_asks_before_writing_a_protected_file(tmp_path: Path, target: str, shown: str) -> None:
    user = User()
    events, _ = await write_with(tmp_path, target, user=user)
    (request,) = user.requests
    assert shown in request.reason_asked and request.reason_asked.endswith("writes to it always ask")
    assert any(isinstance(e, PermissionAsked) for e in events)
    assert not (tmp_path / target).exists() or (tmp_path / target).read_text() != "evil"


async def test_accept_edits_still_writes_an_ordinary_file_without_asking(tmp_path: Path) -> None:
    user = User()
    await write_with(tmp_path, "notes/AGENTS.md.bak", user=user)
    assert user.requests == []
    assert (tmp_path / "notes" / "AGENTS.md.bak").read_text() == "evil"


async def test_a_symlink_to_a_rules_file_asks(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("be nice")
    (tmp_path / "notes.md").symlink_to(tmp_path / "AGENTS.md")
    user = User()
    await write_with(tmp_path, "notes.md", user=user)
    assert "`AGENTS.md`" in user.requests[0].reason_asked
    assert (tmp_path / "AGENTS.md").read_text() == "be nice"


async def test_the_kernel_startup_folder_asks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ipython = tmp_path / "ipython"
    monkeypatch.setenv("IPYTHONDIR", str(ipython))
    user = User()
    await write_with(tmp_path / "proj", str(ipython / "profile_default/startup/00.py"), user=user,
                     allowed_paths=(ipython,))
    assert "IPython's config" in user.requests[0].reason_asked
    assert not (ipython / "profile_default/startup/00.py").exists()


async def test_headless_write_to_a_protected_file_is_denied_saying_how_to_permit(tmp_path: Path) -> None:
    events, engine = await write_with(tmp_path, ".mcp.json", allow=["write_file"])
    (result,) = [e for e in events if isinstance(e, ToolResult)]
    assert result.is_error and "can_use_tool" in result.content and "bypass" in result.content
    assert not (tmp_path / ".mcp.json").exists()
    assert engine.denials[0].tool == "write_file"


@pytest.mark.parametrize("allow", [[], ["write_file"]])
async def test_allow_always_and_the_allow_list_do_not_cover_protected_files(tmp_path: Path, allow: list) -> None:
    api = SimulatedAPI([tool_reply("write_file", {"path": "a.txt", "content": "1"}, id="toolu_1"),
                        tool_reply("write_file", {"path": "AGENTS.md", "content": "2"}, id="toolu_2"),
                        tool_reply("write_file", {"path": "b.txt", "content": "3"}, id="toolu_3"), text_reply("ok")])
    user = User(Allow(always=True))
    engine = make_engine(api, tmp_path, tools=[WriteFile()], can_use_tool=user, allow=allow)
    await run(engine, "write them")
    asked = [r.input["path"] for r in user.requests]
    assert asked == ([str(tmp_path / "a.txt")] if not allow else []) + [str(tmp_path / "AGENTS.md")]
    assert (tmp_path / "b.txt").read_text() == "3"


async def test_a_hook_allow_does_not_skip_the_ask_for_a_protected_file(tmp_path: Path) -> None:
    user = User()
    await write_with(tmp_path, ".mcp.json", user=user, hooks={"pre_tool_use": lambda call: Allow()})
    assert len(user.requests) == 1
    assert not (tmp_path / ".mcp.json").exists()


async def test_bypass_writes_a_protected_file_without_asking(tmp_path: Path) -> None:
    user = User()
    await write_with(tmp_path, ".mcp.json", user=user, permission_mode="bypass")
    assert user.requests == []
    assert (tmp_path / ".mcp.json").read_text() == "evil"


async def test_a_home_path_outside_cwd_asks_in_accept_edits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    cwd = tmp_path / "proj"
    user = User()
    await write_with(cwd, "~/a.txt", user=user, allowed_paths=(home,))
    assert len(user.requests) == 1
    assert not (home / "a.txt").exists()


async def test_hooks_and_the_prompt_see_the_resolved_path(tmp_path: Path) -> None:
    seen: list[Any] = []

    def guard(call: ToolCall) -> Any:
        seen.append(call.input["path"])
        return Deny("secrets") if str(call.input["path"]).startswith(str(tmp_path / "secrets")) else None

    (tmp_path / "sub").mkdir()
    expected = str(real(tmp_path) / "secrets" / "token.txt")
    await write_with(tmp_path, "sub/../secrets/token.txt", user=User(Allow()), hooks={"pre_tool_use": guard})
    assert seen == [expected]
    assert not (tmp_path / "secrets" / "token.txt").exists()


def test_the_lexical_and_the_real_path_are_both_checked(tmp_path: Path) -> None:
    (tmp_path / "real.md").write_text("x")
    os.symlink(tmp_path / "real.md", tmp_path / "AGENTS.md")
    assert protected_reason("AGENTS.md", tmp_path) is not None
    assert protected_reason("real.md", tmp_path) is None
    assert protected_reason("data.csv", tmp_path) is None


@pytest.mark.parametrize("target,shown", [
    (".venv/lib/python3.11/site-packages/evil.pth", ".pth file"),
    ("EVIL.PTH", ".pth file"),
    (".bashrc", "runs code when a shell starts"),
    (".profile", "runs code when a shell starts"),
    ("sitecustomize.py", "runs code when Python starts"),
    (".MCP.json", "configures nbagent's MCP servers"),
    ("agents.md", "holds rules nbagent sends"),
    (".NBAGENT/rules/x.md", "which configures nbagent"),
    (".git/config", "run commands when git runs"),  # core.fsmonitor: the user's next `git status` runs it
    (".git/hooks/pre-commit", "run commands when git runs"),
    ("sub/.GIT/hooks/post-checkout", "run commands when git runs"),
])
async def test_accept_edits_asks_before_writing_files_that_run_code_later_in_any_case(
        tmp_path: Path, target: str, shown: str) -> None:
    user = User()
    await write_with(tmp_path, target, user=user)
    (request,) = user.requests
    assert shown in request.reason_asked


@pytest.mark.parametrize("where", ["home/.ssh/authorized_keys", "home/.local/share/jupyter/nbagent/replay_key",
                                   "home/.local/share/jupyter/runtime/jupyter_cookie_secret",
                                   "site/evil_module.py", "home/.config/fish/config.fish"])
def test_trust_and_startup_folders_are_protected(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str) -> None:
    import site

    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("JUPYTER_DATA_DIR", raising=False)
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    monkeypatch.setattr(site, "getsitepackages", lambda: [str(tmp_path / "site")])
    assert protected_reason(str(tmp_path / where), tmp_path) is not None
    assert protected_reason(str(tmp_path / "home" / "notes.txt"), tmp_path) is None


@pytest.mark.parametrize("raw", ["AGENTſ.md", "jupyter_ſerver_config.py", "ſitecustomize.py", "bin/../ipython_config.py"])
def test_names_a_case_insensitive_file_system_folds_to_a_protected_file_ask(raw: str, tmp_path: Path) -> None:
    """``jupyter_ſerver_config.py`` is ``jupyter_server_config.py`` on APFS and NTFS (ſ folds to s),
    which Jupyter runs from the working folder at its next start: accept_edits wrote it unasked
    (attacker pass 6, F6)."""
    assert protected_reason(raw, tmp_path) is not None


@pytest.mark.parametrize("raw", ["AGENTS.md.", "AGENTS.md ", "AGENTS.md::$DATA", "jupyter_server_config.py.",
                                 "sitecustomize.py:x", "report.ipynb. "])
def test_names_windows_opens_as_a_protected_file_ask(raw: str, tmp_path: Path) -> None:
    """Windows drops trailing dots and spaces and reads ``name:stream`` as the file: these open the
    protected file there (attacker pass 6, F6)."""
    assert protected_reason(raw, tmp_path) is not None
