"""Files that hold credentials: a read-only tool that reads one asks first (every mode but ``bypass``).

Why: what a tool reads goes to the model, and from there one prompt injection away from anyone (a
link the user clicks, a server-side web search). Reading is otherwise free, so the rule is narrow:
keys and tokens by where they are kept (``~/.ssh``, ``~/.aws``, ``.git/config`` with a token in a
remote URL, ``.env`` files, Jupyter's runtime folder with the server token, nbagent's own key and
endpoint tokens), not every dot-file. Like a protected write (:mod:`.protected`), neither the
``allow`` list, "Allow always" nor a hook's Allow covers such a read: the user is asked each time.
"""

from __future__ import annotations

import os
import re
import urllib.parse
from pathlib import Path
from typing import Mapping

from .protected import NBAGENT_DIR, argument_paths, lexical_path, name_key, resolve_tool_path

# Folders that hold keys or tokens, wherever they are (a copied home, a container's mounted config).
_SECRET_DIRS = {
    ".ssh": "holds SSH keys", ".gnupg": "holds GnuPG keys", ".aws": "holds AWS credentials",
    ".azure": "holds Azure credentials", ".kube": "holds Kubernetes credentials",
    ".docker": "holds registry logins", ".password-store": "holds passwords",
    # What data work keeps in the home folder: the people a notebook serves have these more often
    # than an SSH key (a Kaggle or Hugging Face token opens their accounts as much).
    ".kaggle": "holds a Kaggle API key", ".huggingface": "holds a Hugging Face token",
    ".terraform.d": "holds Terraform Cloud tokens", ".snowflake": "holds Snowflake connections",
    ".dbt": "holds database profiles (passwords)", ".oci": "holds Oracle Cloud keys",
    ".databricks": "holds Databricks tokens",
}
# Folders under ``.config`` that hold tokens (gcloud, the GitHub CLI, git's own credentials; the
# Anthropic SDK's login, the OAuth tokens of the account nbagent's own requests use).
_CONFIG_SECRET_DIRS = {"gcloud", "gh", "hub", "git", "containers", "rclone", "pypoetry", "ngrok", "gspread", "snowflake",
                       "anthropic"}
_SECRET_NAMES = {
    ".netrc", "_netrc", ".pgpass", ".my.cnf", ".git-credentials", ".gitconfig", ".pypirc", ".npmrc",
    ".envrc", "credentials", "credentials.json", "credentials.toml", "notebook_secret",
    "jupyter_cookie_secret", ".databrickscfg", ".s3cfg", ".boto", ".yarnrc.yml", "kaggle.json",
    # Written beside a notebook by Google's API quickstarts (the user's OAuth token), Streamlit's
    # secrets; Claude Code's login, Vault's and Terraform Cloud's tokens in the home folder.
    "token.json", "token.pickle", "secrets.toml", ".credentials.json", ".vault-token", ".terraformrc",
    # Shells' and REPLs' histories: every `export TOKEN=…`, `psql "postgres://ana:…@…"` and cell
    # ever typed (IPython's history.sqlite holds each kernel's inputs, `db_password = "…"` too).
    ".bash_history", ".zsh_history", ".histfile", "fish_history", ".sh_history", ".python_history",
    ".psql_history", ".mysql_history", ".sqlite_history", ".rediscli_history", ".node_repl_history",
    ".rhistory", "history.sqlite",
}
# Hugging Face keeps its token in its cache folder (``~/.cache/huggingface/token``), beside models
# that read freely: these names there only.
_HF_TOKENS = {"token", "stored_tokens"}
_SECRET_PATTERNS = (
    re.compile(r"^\.env(\..+)?$|^.+\.env$"),  # .env, .env.local, prod.env: dotenv files
    re.compile(r"^id_(rsa|dsa|ecdsa|ed25519)(_sk)?$"),  # private SSH keys copied anywhere
    re.compile(r".+\.(pem|key|p12|pfx|jks|keystore)$"),
    re.compile(r"^client_secret.*\.json$"),  # a Google OAuth client (client_secret_<id>.apps….json)
)
_GIT_SECRETS = {"config", "config.worktree", "credentials"}  # a remote URL or http.extraheader with a token


_TOKEN_FILE_ENV = ("ANTHROPIC_IDENTITY_TOKEN_FILE", "AWS_WEB_IDENTITY_TOKEN_FILE", "GOOGLE_APPLICATION_CREDENTIALS")
"""Variables that name a credential's file: a federation token (a JWT, which no key shape redacts)
or a Google service account's key (its `private_key` redacted by its shape, but its id, email and
project, and a refresh token's file, are the account's keys to the door)."""


def _secret_roots() -> list[tuple[Path, str]]:
    """Folders that hold credentials as a whole: Jupyter's user data and runtime folders (server
    tokens, kernel keys, the notebook-trust secret, nbagent's signing key), Jupyter's and IPython's
    kernel security folders, and nbagent's own configuration (endpoint tokens)."""
    home = Path.home()
    roots = [(str(home / NBAGENT_DIR), "configures nbagent (endpoint tokens)")]
    if key := os.environ.get("NBAGENT_REPLAY_KEY_FILE"):
        roots.append((key, "is nbagent's signing key"))
    if sdk := os.environ.get("ANTHROPIC_CONFIG_DIR"):  # the SDK's login, moved (its credentials/ are tokens)
        roots.append((sdk, "is the Anthropic SDK's configuration (its login tokens)"))
    # The federation tokens the SDK (and AWS's) exchange for access, named by path: a JWT, which no key
    # shape redacts, read unasked where the notebook's folder holds it (review of pass 24).
    roots += [(token, f"is the credentials file {var} names") for var in _TOKEN_FILE_ENV if (token := os.environ.get(var))]
    try:
        from jupyter_core import paths
    except ImportError:  # without Jupyter there is no Jupyter secret to protect
        pass
    else:
        roots += [(paths.jupyter_data_dir(), "is Jupyter's data folder (its secrets, nbagent's signing key)"),
                  (paths.jupyter_runtime_dir(), "is Jupyter's runtime folder (server tokens, kernel keys)"),
                  (paths.jupyter_config_dir(), "is Jupyter's config (server tokens, password hashes)")]
    return [(Path(p).expanduser().resolve(), why) for p, why in roots]


def _reason_for(path: Path, roots: list[tuple[Path, str]]) -> str | None:
    name = name_key(path.name)  # case-insensitive file systems open .SSH, .ſſh (ſ folds to s) and .ssh. as .ssh
    parts = [name_key(part) for part in path.parts]
    if name in _SECRET_NAMES or any(p.match(name) for p in _SECRET_PATTERNS):
        return f"`{path.name}` usually holds a password, token or key"
    for part in parts:  # the folder itself too: list_files of `.ssh` shows what keys there are
        if part in _SECRET_DIRS:
            return f"`{path}` is inside `{part}/`, which {_SECRET_DIRS[part]}"
    if any(a == ".config" and b in _CONFIG_SECRET_DIRS for a, b in zip(parts, parts[1:], strict=False)):
        return f"`{path}` is in a `.config/` folder that holds login tokens"
    if "huggingface" in parts[:-1] and name in _HF_TOKENS:
        return f"`{path}` is Hugging Face's token file"
    if ".git" in parts[:-1] and name in _GIT_SECRETS:
        return f"`{path}` is a git config, which may hold a token (in a remote URL or a header)"
    if "security" in parts and any(part.startswith("profile_") for part in parts):
        return f"`{path}` is in an IPython profile's security folder (kernel keys)"
    for root, why in roots:
        if path == root or path.is_relative_to(root):
            return f"`{path}` is inside `{root}`, which {why}"
    return None


def _holds_credentials(raw: object, cwd: Path | None) -> str | None:
    """Why the tool path ``raw`` holds credentials (None: it does not). As for a protected write, the
    path as written and its real path are both checked, so a symlink inside the project that points
    at ``~/.ssh/id_rsa`` counts too."""
    if not isinstance(raw, str) or not raw or "\x00" in raw:
        return None
    base = cwd if cwd is not None else Path.cwd()
    try:
        candidates = [resolve_tool_path(raw, base), lexical_path(raw, base)]
    except (OSError, RuntimeError, ValueError):
        return f"`{raw}` cannot be resolved, so it cannot be shown not to hold credentials"
    roots = _secret_roots()
    return next((why for path in candidates if (why := _reason_for(path, roots)) is not None), None)


def secret_reason(raw: object, cwd: Path | None) -> str | None:
    """Why reading the tool path ``raw`` always asks: it holds credentials (None: it does not)."""
    why = _holds_credentials(raw, cwd)
    return f"{why}: reading it always asks, as its content would go to the model" if why else None


def secret_write_reason(raw: object, cwd: Path | None) -> str | None:
    """Why writing the tool path ``raw`` always asks: it holds credentials (None: it does not). An
    edit can send them elsewhere (a ``token.json``'s ``token_uri``, a profile's endpoint), and
    ``edit_file``'s answers ("not found", "occurs 2 times") tell what the file holds, guess by guess."""
    why = _holds_credentials(raw, cwd)
    return (f"{why}: changing it always asks, as an edit could send its credentials elsewhere (and tells "
            "what it holds)") if why else None


_PATH_ARGUMENT = re.compile(r"(?i)(?:.*_)?(?:path|paths|file|files|filename|filenames|filepath|filepaths)")
"""The arguments that name what a read-only tool reads: ``path``, and an MCP server's own names
(the filesystem server's ``read_multiple_files(paths=[…])``, ``file_path``, ``filename``)."""
_OTHER_ARGUMENT = re.compile(r"(?i)(?!(?:.*_)?(?:path|paths|file|files|filename|filenames|filepath|filepaths)$).*")
"""Any other argument: only its ``file:`` URIs are paths (an MCP server's ``read_resource(uri="file:///…/.env")``,
``url``, ``source``, ``location``); a web page's URL is not (``https://…/.env`` asked nothing of yours).
Review of atk21: only ``uri``/``url`` arguments were read, and ``source="file:///…/.env"`` ran unasked."""
MAX_PATHS_CHECKED = 64


def file_uris(values: list[object]) -> list[object]:
    """The local paths of the ``file:`` URIs among ``values`` (``file:///home/ana/.ssh/id_rsa``)."""
    paths: list[object] = []
    for value in values:
        if isinstance(value, str) and value[:5].lower() == "file:":
            parsed = urllib.parse.urlsplit(value)
            paths.append(urllib.parse.unquote(parsed.path) or value)
    return paths


def read_paths(tool_input: Mapping[str, object]) -> list[object]:
    """The files a call names: its arguments named like paths (:data:`_PATH_ARGUMENT`, lists and one
    level into objects too) and the ``file:`` URIs of any other argument, as local paths."""
    return argument_paths(tool_input, _PATH_ARGUMENT) + file_uris(argument_paths(tool_input, _OTHER_ARGUMENT))


def secret_read_reason(tool: object, tool_input: Mapping[str, object] | None, cwd: Path | None) -> str | None:
    """Why a read-only tool's call always asks: a path it is given, under any argument of
    :data:`_PATH_ARGUMENT` (a list of them too) or as a ``file:`` URI (:func:`read_paths`), holds
    credentials; or it is given more paths than are checked. None for a tool that may write (its
    own rules hold) or a call that names none."""
    if not getattr(tool, "read_only", False) or not isinstance(tool_input, Mapping):
        return None
    paths = read_paths(tool_input)
    if len(paths) > MAX_PATHS_CHECKED:
        return f"the call names {len(paths)} files, more than the {MAX_PATHS_CHECKED} checked for credentials"
    return next((why for raw in paths if (why := secret_reason(raw, cwd)) is not None), None)


__all__ = ["MAX_PATHS_CHECKED", "file_uris", "read_paths", "secret_read_reason", "secret_reason", "secret_write_reason"]
