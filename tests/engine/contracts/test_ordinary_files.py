"""``accept_edits`` accepts a write only to an ordinary file of the project: a dot-file or dot-folder,
a Python environment, Jupyter's folders, an executable file and a notebook (``.ipynb``) ask, in
every mode but bypass (attacker pass 3, F1 and F2)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from nbagent.engine.contracts.permissions import Allow
from nbagent.engine.contracts.protected import protected_reason
from nbagent.providers.simulated import SimulatedAPI, text_reply, tool_reply
from nbagent.tools.files import EditFile, ReadFile, WriteFile
from tests.engine.contracts.test_protected import User, write_with
from tests.engine.loop.test_query_support import make_engine, run


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home folder that is also the working folder (a notebook in ``~``)."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for var in ("JUPYTER_DATA_DIR", "JUPYTER_CONFIG_DIR", "JUPYTER_RUNTIME_DIR", "XDG_DATA_HOME", "XDG_CONFIG_HOME"):
        monkeypatch.delenv(var, raising=False)
    return home


@pytest.mark.parametrize("target", [
    ".gitconfig", ".config/git/config", ".bash_aliases", ".config/autostart/x.desktop",
    ".config/systemd/user/x.service", ".config/pip/pip.conf", ".githooks/pre-commit", ".pre-commit-config.yaml",
    ".github/workflows/ci.yml",
])
async def test_accept_edits_asks_before_writing_a_dot_file_in_the_home_folder(home: Path, target: str) -> None:
    user = User()
    await write_with(home, target, user=user)
    (request,) = user.requests
    assert "dot-files configure tools" in request.reason_asked
    assert request.reason_asked.endswith("writes to it always ask")
    assert not (home / target).exists()


async def test_an_executable_file_asks_even_in_a_plain_folder(tmp_path: Path) -> None:
    hook = tmp_path / "hooks" / "pre-commit"  # core.hooksPath=hooks: the next `git commit` runs it
    hook.parent.mkdir()
    hook.write_text("#!/bin/sh\nexit 0\n")
    hook.chmod(0o755)
    user = User()
    await write_with(tmp_path, "hooks/pre-commit", user=user)
    assert "is executable" in user.requests[0].reason_asked
    assert hook.read_text() == "#!/bin/sh\nexit 0\n"


@pytest.mark.parametrize("marker", ["pyvenv.cfg", "conda-meta/history"])
@pytest.mark.parametrize("inside", ["share/jupyter/labextensions/x/static/remoteEntry.js",
                                    "share/jupyter/lab/settings/overrides.json", "bin/jupyter"])
async def test_a_project_environment_asks(tmp_path: Path, marker: str, inside: str) -> None:
    (tmp_path / "env" / marker).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / "env" / marker).write_text("home = /usr\n")
    user = User()
    await write_with(tmp_path, f"env/{inside}", user=user)
    assert "Python environment" in user.requests[0].reason_asked
    assert not (tmp_path / "env" / inside).exists()


@pytest.mark.parametrize("inside", ["share/jupyter/lab/settings/overrides.json",
                                    "share/jupyter/labextensions/x/static/a.js", "bin/activate"])
def test_the_running_environments_jupyter_and_bin_folders_are_protected(tmp_path: Path, inside: str) -> None:
    assert protected_reason(str(Path(sys.prefix) / inside), tmp_path) is not None


def test_every_jupyter_data_folder_is_protected(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "shared-jupyter"))
    why = protected_reason(str(tmp_path / "shared-jupyter" / "labextensions" / "x.js"), tmp_path / "proj")
    assert why is not None and "Jupyter data folder" in why


def test_an_environment_that_holds_the_project_protects_only_its_own_folders(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "prefix", str(tmp_path))  # a project under /usr/local, say
    cwd = tmp_path / "src" / "app"
    assert protected_reason("model.py", cwd) is None
    assert protected_reason(str(tmp_path / "bin" / "python"), cwd) is not None


async def test_ordinary_project_files_are_still_written_without_asking(tmp_path: Path) -> None:
    targets = ("src/model.py", "results/summary.md", "Makefile")
    api = SimulatedAPI([*(tool_reply("write_file", {"path": t, "content": "x"}, id=f"toolu_{i}")
                          for i, t in enumerate(targets)), text_reply("ok")])
    user = User()
    engine = make_engine(api, tmp_path, tools=[WriteFile()], can_use_tool=user, permission_mode="accept_edits")
    await run(engine, "write them")
    assert user.requests == []
    assert all((tmp_path / t).read_text() == "x" for t in targets)


NOTEBOOK = {"cells": [{"cell_type": "code", "id": "user1", "metadata": {}, "source": "USER_CELL = 1",
                       "outputs": [], "execution_count": None}],
            "metadata": {}, "nbformat": 4, "nbformat_minor": 5}


@pytest.mark.parametrize("name", ["analysis.ipynb", "sub/Report.IPYNB"])
async def test_accept_edits_asks_before_writing_a_notebook_file(tmp_path: Path, name: str) -> None:
    user = User()
    await write_with(tmp_path, name, user=user)
    (request,) = user.requests
    assert "is a notebook" in request.reason_asked and "notebook_edit" in request.reason_asked
    assert not (tmp_path / name).exists()


@pytest.mark.parametrize("mode,allow", [("accept_edits", []), ("default", ["edit_file"])])
async def test_edit_file_of_the_users_notebook_asks_whatever_the_allow_list(
        tmp_path: Path, mode: str, allow: list[str]) -> None:
    (tmp_path / "analysis.ipynb").write_text(json.dumps(NOTEBOOK, indent=1))
    api = SimulatedAPI([tool_reply("read_file", {"path": "analysis.ipynb"}, id="toolu_r"),
                        tool_reply("edit_file", {"path": "analysis.ipynb", "old": "USER_CELL = 1",
                                                 "new": "import os; os.system('id')"}, id="toolu_e"),
                        text_reply("ok")])
    user = User(Allow(always=True))
    engine = make_engine(api, tmp_path, tools=[ReadFile(), EditFile()], can_use_tool=user,
                         permission_mode=mode, allow=allow)
    await run(engine, "tidy the notebook")
    assert [r.tool_name for r in user.requests] == ["edit_file"]
    assert "is a notebook" in user.requests[0].reason_asked


async def test_bypass_writes_a_notebook_file_without_asking(tmp_path: Path) -> None:
    user = User()
    await write_with(tmp_path, "analysis.ipynb", user=user, permission_mode="bypass")
    assert user.requests == [] and (tmp_path / "analysis.ipynb").read_text() == "evil"
