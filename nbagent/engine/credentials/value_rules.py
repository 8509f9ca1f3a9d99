"""What a value beside a credential's name is and is not: a stand-in (``password``, ``$TOKEN``,
``<api-key>``), a help text's metavar (``PASSWORD``), a value the shell makes (``$(cat token.txt)``),
or a credential by the name it is given (``auth.rootPassword``). Shared by the rules of flags, command
lines, names kept beside values and ``NAME=value`` lines.
"""

from __future__ import annotations

import re

from .credential_names import snake_name
from .embedded_secrets import MAX_CHARS, MIN_CHARS
from .named_values import masked, named_secret

METAVAR = re.compile(r"[A-Z][A-Z0-9_]*[\])},;]*")
"""``--password PASSWORD`` in a command's help (argparse's metavar): a placeholder, not the value."""
_PLACEHOLDER = re.compile(r"\$\{[^{}]+\}|[$%](?:[A-Z_][A-Z0-9_]*|[a-z_][a-z0-9_]*)%?|\{\{?[^{}]*\}\}?|<[^<>]*>"
                          r"|\[[^\[\]]*\]|(?i:your[_-][a-z0-9_-]*)|(?i:(?:your|my|the)?[_-]?(?:pass(?:word|wd|phrase)?|secret|token|api[_-]?key"
                          r"|key|credentials?|[a-z]+[_-]password))")
"""A value that stands for one in docs and scripts: ``curl -u user:password``, ``Authorization: Bearer
$API_TOKEN`` / ``<token>`` / ``{token}``: not a credential, and redacting it hid the word (``password``)
from every text the model read."""
_SHELL_MADE = re.compile(r"\$\(|\$\{|`|\$[A-Za-z_]\w*(?:\s|$)")
"""An unquoted value the shell makes: a command's output, ``$(…)`` or backquotes, or a variable,
``${…}`` or ``$NAME`` (then the rest of the line is the command run with it): the start of a
:data:`_PLACEHOLDER`'s shell forms, read where the value is the rest of a line."""


def credential_value(value: str) -> bool:
    """Whether ``value`` may be a credential: its length within bounds, and no stand-in for one."""
    return MIN_CHARS <= len(value) <= MAX_CHARS and not _PLACEHOLDER.fullmatch(value) and not masked(value)


def placeholder(value: str) -> bool:
    """Whether ``value`` stands for a credential (``password``, ``$TOKEN``, ``<api-key>``) rather than being one."""
    return _PLACEHOLDER.fullmatch(value) is not None


def shell_made(value: str) -> bool:
    """Whether ``value`` (the rest of a ``NAME=value`` line) starts as the shell makes it:
    ``API_TOKEN=$(cat token.txt)``, ``PGPASSWORD=$PW psql``: no value of its own."""
    return _SHELL_MADE.match(value) is not None


def named_property(name: str, value: str) -> list[str]:
    """``value`` when ``name`` (``auth.rootPassword``, ``javax.net.ssl.trustStorePassword``) names a credential."""
    if not credential_value(value):  # first: a table's short cells are most of what is looked at
        return []
    key = snake_name(name).lower()
    return [value] if not METAVAR.fullmatch(value) and named_secret(key, value) else []


__all__ = ["METAVAR", "credential_value", "named_property", "placeholder", "shell_made"]
