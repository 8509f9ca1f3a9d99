"""Whether a value is a secret by the name that holds it: the notebook's rule, shared by a kernel's
variables (:mod:`.kernel_secrets`), the environment (:mod:`.env_secrets`), printed ``NAME=value``
lines (:mod:`.assigned_secrets`) and a URL's query (:mod:`.query_text`)."""

from __future__ import annotations

import re

from .credential_names import PASSWORD_NAME, SEPARATORS, TOKEN_NAME, WEAK_PASSWORD_NAME
from .embedded_secrets import MAX_CHARS, MIN_CHARS, PATH_START, looks_like_token

_PLAIN_WORDS = re.compile(r"[A-Za-z][A-Za-z _()-]*")
_RELATIVE_PATH = re.compile(r"[\w.-]+(?:[/\\][\w.-]+)+[/\\]?|[A-Za-z]:[/\\]\S*")
_MASK = re.compile(r"([*\u2022\u25cfxX#])\1+")
"""A value shown masked (``********``, ``••••••••``, ``xxxxxxxx``): what a form or a log prints instead of a password."""
_NOT_LETTERS = re.compile(r"[\W_]+")


def named_secret(name: str, value: str) -> bool:
    """Whether ``value`` is a secret by the name that holds it, by the notebook's rule (a password's
    name: any value but a path; a token's or key's name: a value shaped like a generated one). The
    environment's variables follow it too (``OPENAI_KEY``, ``AZURE_OPENAI_KEY``, ``DB_PASS``), beside
    the names :data:`~nbagent.engine.credentials.env_secrets.CREDENTIAL_NAME` takes whatever their value."""
    if not MIN_CHARS <= len(value) <= MAX_CHARS or PATH_START.match(value):
        return False
    name = name.translate(SEPARATORS)
    if PASSWORD_NAME.fullmatch(name):
        # A label (``{"db_password": "DB Password"}``: a form's field) or a mask is no password.
        if masked(value) or _NOT_LETTERS.sub("", value).lower() == _NOT_LETTERS.sub("", name).lower():
            return False
        # pw, pwd, db_pass are also a power column, a working folder, a parser's pass: under such a
        # name plain words (``"power_watts"``, ``"Power (W)"``) and a relative path are no password.
        plain = _PLAIN_WORDS.fullmatch(value) or _RELATIVE_PATH.fullmatch(value)
        return not (plain and WEAK_PASSWORD_NAME.fullmatch(name))
    return TOKEN_NAME.fullmatch(name) is not None and (looks_like_token(value) or "://" in value and "@" in value)


def masked(value: str) -> bool:
    """Whether ``value`` is a password shown masked (``********``, ``••••••••``): none to hide."""
    return _MASK.fullmatch(value) is not None


__all__ = ["masked", "named_secret"]
