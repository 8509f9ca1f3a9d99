"""A URL query's token wherever a text shows it, whatever holds the key: an error naming the request's
path (requests' ``Max retries exceeded with url: /v1/items/3?api_key=…``), a printed or logged URL.

:func:`~.embedded_secrets.query_tokens` knows a query's tokens when a variable or the environment holds
the URL; a key a helper read from a file into a local variable is held by none, so its value is no
secret the sanitizer knows, and the text went to the model as it was. This reads the text itself, by
the same rule: a key named as a token with a value shaped like a generated one, a password's name
with any value but a path, or a signature (``sig``, ``X-Amz-Signature``).
"""

from __future__ import annotations

import re
from functools import lru_cache
from urllib.parse import unquote

from .credential_names import SEPARATORS
from .embedded_secrets import MAX_CHARS, MIN_CHARS, SIGNATURE_KEYS
from .named_values import named_secret
from .secret_forms import REDACTED

_QUERY_PAIR = re.compile(r"(?P<lead>[?&;](?P<key>[A-Za-z][A-Za-z0-9_.\-]{0,63})=)(?P<value>[^&#\s'\"<>()\[\]{}\\,;|`]+)")
"""A query's ``key=value`` after ``?``, ``&`` or ``;`` (``&amp;`` in HTML ends with it)."""
MAX_TEXT_CHARS = 2_000_000
"""A longer text (an image's base64 has no ``?``; a document) is not read for queries."""


def may_hold_query(text: str) -> bool:
    """The cheap test before the regex: most text has no ``?`` beside an ``=``."""
    return "?" in text and "=" in text and len(text) <= MAX_TEXT_CHARS


@lru_cache(maxsize=4_096)
def _is_token(key: str, raw: str) -> bool:
    """Whether ``key=raw`` in a query carries a credential (cached: a listing repeats its URLs' keys)."""
    name = key.translate(SEPARATORS).lower()
    return MIN_CHARS <= len(raw) <= MAX_CHARS and (name in SIGNATURE_KEYS or named_secret(name, unquote(raw)))


def _token(match: re.Match[str]) -> str:
    if _is_token(match.group("key"), match.group("value")):
        return match.group("lead") + REDACTED
    return match.group(0)


_URL_PASSWORD = re.compile(r"(?P<lead>(?<![A-Za-z0-9+.\-])[A-Za-z][A-Za-z0-9+.\-]{0,31}://[^\s/@:'\"<>]{0,128}:)"
                           r"(?P<password>[^\s/@'\"<>]{1,4096})(?=@)")
"""A URL's ``user:password@`` in a text (a log line, an exception): the password part."""


def redact_url_passwords(text: str) -> str:
    """``text`` with the password of each URL written in it (``postgresql://ana:…@db``) ``[redacted]``:
    a URL a helper built from a config file is held by no variable whose value is known."""
    if "://" not in text or "@" not in text or len(text) > MAX_TEXT_CHARS:
        return text
    return _URL_PASSWORD.sub(_url_password, text)


_PLACEHOLDER = re.compile(r"[A-Za-z]{1,16}")
"""A password of letters alone (``postgres:postgres``, ``user:password``, ``changeme``): a default or a
placeholder, which code the model writes uses too (redacted, the code it runs would hold ``[redacted]``)."""


_TEMPLATE_FIELD = re.compile(r"\{(?:[A-Za-z_][\w.]*(?:\([\w.]*\))?)?\}|%(?:\(\w+\))?[sr]|\$\{?[A-Z_][A-Z0-9_]*\}?")
"""A field the code fills in (``{pw}``, ``{quote_plus(pw)}``, ``{}``, ``%s``, ``%(pw)s``, an
environment variable's upper-case ``$DB_PASS``; a password such as ``$Summer2024`` is none): code
that builds the URL holds no password (redacted, the code the model runs would hold ``[redacted]``)."""


def _url_password(match: re.Match[str]) -> str:
    password = match.group("password")
    if _PLACEHOLDER.fullmatch(password) or _TEMPLATE_FIELD.fullmatch(password):
        return match.group(0)
    return match.group("lead") + REDACTED


def redact_query_tokens(text: str) -> str:
    """``text`` with each URL query token in it replaced by ``[redacted]`` (its key kept)."""
    if not may_hold_query(text):
        return text
    return _QUERY_PAIR.sub(_token, text)


__all__ = ["may_hold_query", "redact_query_tokens", "redact_url_passwords"]
