"""The values a text's ``NAME=value`` (``name: value``) lines give credentials' names: a printed
``.env`` (``!cat .env``, ``%env``), an INI or YAML file, or such a file's text a variable holds
(``open(".env").read()``). Read by the environment's rule (``DB_PASSWORD``, ``GITHUB_TOKEN``:
whatever the value but a path) and the notebook's (a key's name needs a value shaped like a
generated one), for :mod:`.output_secrets` and :mod:`.kernel_secrets`.
"""

from __future__ import annotations

import re

from .credential_names import SEPARATORS
from .embedded_secrets import MAX_CHARS, MIN_CHARS, PATH_START
from .env_secrets import credential_setting
from .flag_secrets import flag_secrets
from .named_values import masked, named_secret
from .value_rules import shell_made

_ASSIGNMENT = re.compile(r"(?m)^[ \t]*(?:export[ \t]+)?(?P<name>[A-Za-z_][A-Za-z0-9_.\-]{0,63})[ \t]*[=:]"
                         r"(?P<rest>[^\n]*)")
"""A ``NAME=value`` (or ``name: value``) line: a dotenv file, ``env``'s output, an INI or YAML file. The
value is taken from the rest of the line in Python: a lazy pattern with trailing blanks took
quadratic time on a long line of spaces (2.4 s for 16 KB)."""
_CREDENTIAL_WORDS = ("pass", "pw", "secret", "token", "key", "auth", "credential", "pat", "webhook")
MAX_TEXT_LINES_CHARS = 16_384
"""A variable's text read for such lines at most this long (a file's text held whole: ``Out[n]`` of
``open(".env").read()``); a longer one (a document) is not read at each prompt."""


_COMMENT_MARKS = (" #", "\t#", " ;", "\t;")
"""What starts a line's inline comment: a blank, then ``#`` (dotenv, YAML, shell) or ``;`` (INI).
Found with ``str.find``, not a pattern: ``[ \t]+#`` took quadratic time on a long run of blanks."""


def _is_comment(after: str) -> bool:
    return after[:1] in (" ", "\t") and after.lstrip(" \t")[:1] in ("#", ";")


def _value(rest: str) -> str | None:
    """A line's value after ``=``: unquoted, without an inline comment (``DB_PASSWORD="…"  # prod``,
    ``password: … # rotated``); None for none, a comment, or quotes that do not close it."""
    value = rest.strip()
    if value[:1] in ("'", '"'):
        end = value.find(value[0], 1)
        after = value[end + 1:] if end > 0 else None
        # A quoted value followed by a comment gave nothing: a YAML ``password: "…" # prod`` went whole.
        return value[1:end] if after is not None and (not after or _is_comment(after)) else None
    starts = [i for i in map(value.find, _COMMENT_MARKS) if i >= 0]
    value = value[:min(starts)].rstrip() if starts else value  # its comment is no part of the value
    if shell_made(value):  # ``API_TOKEN=$(cat token.txt)``, ``PGPASSWORD=$PW psql``: a shell's, no value
        return None
    return None if not value or value[0] == "#" or "'" in value or '"' in value else value


def assigned_secrets(text: str) -> list[str]:
    """The values ``text``'s ``NAME=value`` (``name: value``) lines give credentials' names."""
    found: list[str] = flag_secrets(text)  # also ``--password=…``, ``<password>…</password>``, ``Authorization: …``
    if "=" not in text and ":" not in text:
        return found
    low = text.lower()
    if not any(word in low for word in _CREDENTIAL_WORDS):  # one look before the regex runs line by line
        return found
    for match in _ASSIGNMENT.finditer(text):
        name, value = match.group("name"), _value(match.group("rest"))
        if value is None or not MIN_CHARS <= len(value) <= MAX_CHARS or masked(value):
            continue
        # The environment's rule (``MAPBOX_TOKEN=letmein-dev-2024``: whatever the value) or the
        # notebook's, but never a path (a printed ``TOKEN_DIR=/srv/cache``; review of session 57).
        key = name.translate(SEPARATORS)
        if (credential_setting(key) and not PATH_START.match(value)) or named_secret(key, value):
            found.append(value)
    return found


__all__ = ["MAX_TEXT_LINES_CHARS", "assigned_secrets"]
