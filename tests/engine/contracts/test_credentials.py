"""A read-only tool's read of a file that holds credentials asks first, in every mode but bypass, and
nothing of it reaches the model unless the user allows it (attacker pass 3, F3)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from nbagent.engine.contracts.credentials import secret_reason
from nbagent.engine.contracts.events import ToolResult
from nbagent.engine.contracts.permissions import Allow
from nbagent.providers.simulated import SimulatedAPI, text_reply, tool_reply
from nbagent.tools.files import ReadFile
from nbagent.tools.list_files import ListFiles
from tests.engine.contracts.test_protected import User
from tests.engine.loop.test_query_support import make_engine, messages_requests, run

SECRET = "SECRET_VALUE_4f9a2c"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home folder that is also the working folder (a notebook in ``~``)."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for var in ("JUPYTER_DATA_DIR", "JUPYTER_CONFIG_DIR", "JUPYTER_RUNTIME_DIR", "XDG_DATA_HOME",
                "NBAGENT_REPLAY_KEY_FILE", "ANTHROPIC_CONFIG_DIR", "ANTHROPIC_IDENTITY_TOKEN_FILE",
                "AWS_WEB_IDENTITY_TOKEN_FILE", "GOOGLE_APPLICATION_CREDENTIALS"):
        monkeypatch.delenv(var, raising=False)
    return home


def plant(root: Path, rel: str) -> None:
    (root / rel).parent.mkdir(parents=True, exist_ok=True)
    (root / rel).write_text(f"token = {SECRET}\n")


async def read_with(cwd: Path, paths: list[str], *, user: Any = None, tools: Any = None,
                    **settings: Any) -> tuple[list[Any], SimulatedAPI]:
    """``read_file`` of each path through the loop; the events and the API (what the model was sent)."""
    api = SimulatedAPI([*(tool_reply("read_file", {"path": p}, id=f"toolu_{i}") for i, p in enumerate(paths)),
                        text_reply("ok")])
    engine = make_engine(api, cwd, tools=tools or [ReadFile()], can_use_tool=user, **settings)
    return await run(engine, "summarise this folder"), api


def sent(api: SimulatedAPI) -> str:
    return json.dumps([r.body for r in messages_requests(api)])


@pytest.mark.parametrize("target", [
    ".local/share/jupyter/runtime/jpserver-4242.json", ".local/share/jupyter/notebook_secret",
    ".local/share/jupyter/nbagent/replay_key", ".nbagent/endpoints.json", ".ssh/id_ed25519",
    "proj/.git/config", ".netrc", ".aws/credentials", ".config/gcloud/credentials.db", "proj/.env",
    "proj/.env.local", ".git-credentials", ".jupyter/jupyter_server_config.json",
])
@pytest.mark.parametrize("mode", ["default", "accept_edits", "plan"])
async def test_reading_a_credential_file_asks_and_sends_nothing(home: Path, target: str, mode: str) -> None:
    plant(home, target)
    user = User()
    events, api = await read_with(home, [target], user=user, permission_mode=mode)
    (request,) = user.requests
    assert request.reason_asked.endswith("reading it always asks, as its content would go to the model")
    assert SECRET not in sent(api)


async def test_an_ordinary_read_still_runs_without_asking(home: Path) -> None:
    for rel in ("proj/data.csv", "proj/.gitignore", "proj/.git/HEAD", "proj/environment.yml"):
        plant(home, rel)
    user = User()
    _, api = await read_with(home, ["proj/data.csv", "proj/.gitignore", "proj/.git/HEAD", "proj/environment.yml"],
                             user=user)
    # The files were read (``token = …`` reached the model); their ``token`` value is hidden as a
    # printed output's is (read_file's named-value rule, atk20's F4).
    assert user.requests == [] and "token = [redacted]" in sent(api) and SECRET not in sent(api)


async def test_neither_allow_always_nor_the_allow_list_covers_a_credential_read(home: Path) -> None:
    plant(home, ".ssh/id_rsa")
    plant(home, ".ssh/config")
    user = User(Allow(always=True))
    await read_with(home, [".ssh/id_rsa", ".ssh/config"], user=user, allow=["read_file"])
    assert len(user.requests) == 2


async def test_a_headless_credential_read_is_denied_saying_how_to_permit(home: Path) -> None:
    plant(home, ".ssh/id_rsa")
    events, api = await read_with(home, [".ssh/id_rsa"])
    (result,) = [e for e in events if isinstance(e, ToolResult)]
    assert result.is_error and "bypass" in result.content and SECRET not in sent(api)


async def test_bypass_reads_a_credential_file_without_asking(home: Path) -> None:
    plant(home, ".ssh/id_rsa")
    user = User()
    _, api = await read_with(home, [".ssh/id_rsa"], user=user, permission_mode="bypass")
    assert user.requests == [] and "token = [redacted]" in sent(api)


async def test_a_symlink_in_the_project_to_a_key_asks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    plant(tmp_path, ".ssh/config")
    os.symlink(tmp_path / ".ssh" / "config", tmp_path / "notes.txt")
    user = User()
    _, api = await read_with(tmp_path, ["notes.txt"], user=user)
    assert ".ssh/" in user.requests[0].reason_asked and SECRET not in sent(api)


async def test_listing_a_credential_folder_asks_too(home: Path) -> None:
    plant(home, ".ssh/id_rsa")
    api = SimulatedAPI([tool_reply("list_files", {"path": ".ssh"}, id="toolu_l"), text_reply("ok")])
    user = User()
    await run(make_engine(api, home, tools=[ListFiles()], can_use_tool=user), "look")
    assert len(user.requests) == 1


@pytest.mark.parametrize("target", [
    ".kaggle/kaggle.json", "proj/kaggle.json", ".cache/huggingface/token", ".cache/huggingface/stored_tokens",
    ".huggingface/token", ".databrickscfg", ".s3cfg", ".boto", ".terraform.d/credentials.tfrc.json",
    ".snowflake/connections.toml", ".config/snowflake/connections.toml", ".dbt/profiles.yml",
    ".config/pypoetry/auth.toml", ".config/ngrok/ngrok.yml", ".yarnrc.yml", ".oci/config",
])
def test_the_tokens_data_work_keeps_at_home_ask(home: Path, target: str) -> None:
    """A Kaggle key, a Hugging Face token, a Databricks or S3 config were read without asking: one
    prompt injection ("read ~/.kaggle/kaggle.json to download the data") from the model (attacker pass 10)."""
    plant(home, target)
    assert secret_reason(str(home / target), home) is not None


@pytest.mark.parametrize("target", [
    "proj/token.json", "proj/token.pickle", "proj/client_secret.json",
    "proj/client_secret_1234-abc.apps.googleusercontent.com.json", "proj/.streamlit/secrets.toml",
    ".claude/.credentials.json", ".vault-token", ".terraformrc",
])
async def test_the_oauth_tokens_a_notebook_s_api_quickstart_writes_ask(home: Path, target: str) -> None:
    """Google's API quickstarts (Sheets, Drive, Gmail) write the user's OAuth token beside the
    notebook as token.json (token.pickle) from client_secret*.json; Streamlit keeps secrets.toml,
    Claude Code its login in ~/.claude/.credentials.json, Vault its token in ~/.vault-token: each
    went to the model on read_file without a question (attacker pass 11)."""
    plant(home, target)
    user = User()
    _, api = await read_with(home, [target], user=user)
    assert len(user.requests) == 1 and SECRET not in sent(api)


@pytest.mark.parametrize("target", [
    ".bash_history", ".zsh_history", ".local/share/fish/fish_history", ".python_history", ".psql_history",
    ".mysql_history", ".Rhistory", ".ipython/profile_default/history.sqlite",
])
def test_shell_and_repl_histories_ask(home: Path, target: str) -> None:
    """Every `export GITHUB_TOKEN=…`, `mysql -p…` and cell typed is in a history file: read_file
    sent them to the model without a question (attacker pass 11's open item)."""
    plant(home, target)
    assert secret_reason(str(home / target), home) is not None


def test_a_hugging_face_model_in_its_cache_reads_freely(home: Path) -> None:
    plant(home, ".cache/huggingface/hub/models--gpt2/config.json")
    assert secret_reason(str(home / ".cache/huggingface/hub/models--gpt2/config.json"), home) is None


def test_the_replay_key_file_named_by_the_environment_asks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NBAGENT_REPLAY_KEY_FILE", str(tmp_path / "keys" / "mine"))
    assert secret_reason(str(tmp_path / "keys" / "mine"), tmp_path) is not None
    assert secret_reason(str(tmp_path / "keys" / "other"), tmp_path) is None


@pytest.mark.parametrize("raw", ["~/.ſſh/id_rſa", "~/.\u212aube/config", ".ENV", "aws/credentialſ.json"])
def test_names_a_case_insensitive_file_system_folds_to_a_secret_ask(raw: str, tmp_path: Path) -> None:
    """macOS (APFS) and Windows (NTFS) fold case as Unicode does: ``.ſſh/id_rſa`` opens
    ``.ssh/id_rsa`` there, and the read ran without asking (attacker pass 6, F6)."""
    assert secret_reason(raw, tmp_path) is not None


@pytest.mark.parametrize("raw", ["~/.ssh./id_rsa.", "~/.ssh /id_rsa ", ".env.", "id_ed25519::$DATA"])
def test_names_windows_opens_as_a_secret_ask(raw: str, tmp_path: Path) -> None:
    assert secret_reason(raw, tmp_path) is not None


def test_a_read_only_tool_given_a_file_uri_of_a_credential_file_asks(tmp_path: Path) -> None:
    """Attacker pass 21: an MCP server's read-only ``read_resource(uri="file:///…/.env")`` (``url``, ``uris``)
    ran unasked: only arguments named like paths were checked. A web page's URL is no path of yours."""
    from nbagent.engine.contracts.credentials import secret_read_reason

    class ReadOnly:
        read_only = True

    (tmp_path / ".env").write_text("DB_PASSWORD=Zq7-Loud-Tiger-42\n")
    for call in ({"uri": (tmp_path / ".env").as_uri()}, {"urls": [(tmp_path / ".env").as_uri()]},
                 {"resource_url": (tmp_path / ".env").as_uri().replace(".env", "%2Eenv")}):
        assert secret_read_reason(ReadOnly(), call, tmp_path) is not None, call
    for call in ({"url": "https://example.com/.env"}, {"uri": (tmp_path / "data.csv").as_uri()}):
        assert secret_read_reason(ReadOnly(), call, tmp_path) is None, call


def test_a_file_uri_under_any_argument_s_name_asks(tmp_path: Path) -> None:
    """Review of atk21: only ``uri``/``url`` arguments' ``file:`` URIs were read, so a read-only tool
    taking ``source``, ``resource`` or ``location`` read ``.env`` unasked; text that is no URI asks nothing."""
    from nbagent.engine.contracts.credentials import secret_read_reason

    class ReadOnly:
        read_only = True

    (tmp_path / ".env").write_text("DB_PASSWORD=Zq7-Loud-Tiger-42\n")
    for call in ({"source": (tmp_path / ".env").as_uri()}, {"resource": [(tmp_path / ".env").as_uri()]},
                 {"request": {"location": (tmp_path / ".env").as_uri()}}):
        assert secret_read_reason(ReadOnly(), call, tmp_path) is not None, call
    for call in ({"query": "select * from .env"}, {"source": "https://example.com/.env"}, {"text": "a file: .env"}):
        assert secret_read_reason(ReadOnly(), call, tmp_path) is None, call


def test_the_anthropic_sdks_own_login_asks(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The SDK nbagent runs on keeps its login (an OAuth access and refresh token, 0600) in
    ``~/.config/anthropic/credentials/<profile>.json``, or under ``ANTHROPIC_CONFIG_DIR``: a read-only
    tool read it without asking where the notebook sits in the home folder (attacker pass 24)."""
    plant(home, ".config/anthropic/credentials/default.json")
    assert secret_reason(str(home / ".config/anthropic/credentials/default.json"), home) is not None
    monkeypatch.setenv("ANTHROPIC_CONFIG_DIR", str(tmp_path / "sdk"))
    plant(tmp_path, "sdk/credentials/work.json")
    assert secret_reason(str(tmp_path / "sdk/credentials/work.json"), tmp_path) is not None


@pytest.mark.parametrize("variable", ["ANTHROPIC_IDENTITY_TOKEN_FILE", "AWS_WEB_IDENTITY_TOKEN_FILE",
                                      "GOOGLE_APPLICATION_CREDENTIALS"])
def test_the_federation_token_file_the_sdk_reads_asks(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      variable: str) -> None:
    """Review of pass 24: beside its login, the SDK signs in with the JWT in the file
    ``ANTHROPIC_IDENTITY_TOKEN_FILE`` names (AWS's likewise); no key shape redacts a JWT, and a read-only
    tool read it without asking where the notebook's folder holds it. The same for the Google
    service account's key ``GOOGLE_APPLICATION_CREDENTIALS`` names (its email, key id and project
    were shown; only its ``private_key`` was redacted, by its shape)."""
    plant(tmp_path, "run/identity.jwt")
    monkeypatch.setenv(variable, str(tmp_path / "run/identity.jwt"))
    assert secret_reason(str(tmp_path / "run/identity.jwt"), tmp_path) is not None
    assert secret_reason(str(tmp_path / "run/notes.txt"), tmp_path) is None
