"""The credentials a file's text names, hidden from what ``read_file`` shows the model.

``read_file`` runs without asking for any file but those that hold credentials by their name or
place (:mod:`nbagent.engine.contracts.credentials`: ``.env``, ``~/.aws/`` …). A project's
``settings.ini``, ``docker-compose.yml`` or ``helpers.py`` holds a database password just as often,
and ``!cat settings.ini`` in a cell, or the module's line a traceback quotes, showed the model
``[redacted]`` for it, while ``read_file`` of the same file showed the password. So the file's text
goes through the same rules as a cell's printed output (``NAME=value`` / ``name: value`` lines and
named literals such as ``{"password": "…"}``) or, for source code, as a cell's code (named literals
only: ``connect(password="…")``, never ``password = get_password()``).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from nbagent.engine.credentials.kernel_secrets import code_secrets
from nbagent.engine.credentials.output_secrets import MAX_OUTPUT_CHARS, output_secrets
from nbagent.engine.credentials.secret_forms import REDACTED

CODE_SUFFIXES = frozenset({".py", ".pyw", ".pyi", ".ipy", ".r", ".jl", ".js", ".mjs", ".ts", ".scala", ".java", ".go",
                           ".rb", ".sql", ".sh", ".bash", ".zsh"})
"""Source files: read as a cell's code is (their ``password = read_secret()`` lines are code, not values)."""


_JSON_STRING = re.compile(r'"((?:[^"\\\n]|\\.){1,100000})"')


def _notebook_secrets(head: str) -> tuple[str, ...]:
    """A notebook file's (``.ipynb``) secrets: its JSON strings (cells' lines, outputs' text) read as
    the code and outputs they hold, ``db_password = \"…\"`` written with JSON's escapes, which no
    rule reads in the raw text; each found with its JSON-escaped form, as the file writes it."""
    decoded: list[str] = []
    for match in _JSON_STRING.finditer(head):
        try:
            decoded.append(json.loads(f'"{match.group(1)}"'))
        except ValueError:
            continue
    # One a line: a cell's last line has no newline of its own, and ran into the next string
    # (``API_TOKEN=…`` + ``source`` gave ``…source``, which the file never writes: the token was shown).
    found = output_secrets("\n".join(decoded))
    return tuple(sorted({form for secret in found for form in (secret, json.dumps(secret)[1:-1])}, key=len, reverse=True))


def named_file_secrets(path: Path, text: str) -> tuple[str, ...]:
    """The values ``text`` (a part of the file ``path``) gives credentials' names, longest first."""
    head = text[:MAX_OUTPUT_CHARS]  # as a printed output's (code_secrets remembers the texts it read)
    if path.suffix.lower() == ".ipynb":
        return _notebook_secrets(head)
    if path.suffix.lower() in CODE_SUFFIXES:
        return tuple(sorted(code_secrets(head), key=len, reverse=True))
    return output_secrets(head)


def without_named_secrets(path: Path, text: str) -> str:
    """``text`` with each value :func:`named_file_secrets` finds in it ``[redacted]``."""
    for secret in named_file_secrets(path, text):
        text = text.replace(secret, REDACTED)
    return text
