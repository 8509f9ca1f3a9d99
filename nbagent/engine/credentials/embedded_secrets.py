"""The secrets a string carries whatever name holds it, and what a generated token looks like.

A URL's password and query tokens (``postgresql://ana:…@db``, ``?api_key=…``) and a connection
string's keys (``…;PWD=…;``) are credentials under any variable's or setting's name: the kernel's
namespace, the environment and the code of a cell are all read for them (:func:`embedded_secrets`).
"""

from __future__ import annotations

import re
from itertools import islice
from urllib.parse import parse_qsl, unquote, urlsplit

from .credential_names import PASSWORD_NAME as _PASSWORD_NAME
from .credential_names import SEPARATORS as _SEPARATORS
from .credential_names import TOKEN_NAME as _TOKEN_NAME

_TOKEN_SHAPE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_\-+/=.~]{15,}")


def looks_like_token(value: str) -> bool:
    """Whether a value is shaped like a generated credential, whatever its variable is called
    (``"X_SVC": "${MY_SVC}"`` holding ``ghp_…``): 16 or more characters of a token's alphabet
    (no space, no ``:``), letters and digits both, and mixed as random text mixes them: the
    class of character (lower, upper, digit) changes at 3 of 10 letters or digits or more. Names,
    paths, versions, dates, URLs and model ids (``claude-sonnet-4-5-20250929``: one change) change
    class seldom; redacting one would hide it from the model in every result and prompt."""
    if not _TOKEN_SHAPE.fullmatch(value):
        return False
    classes = [0 if c.islower() else 1 if c.isupper() else 2 for c in value if c.isascii() and c.isalnum()]
    if 2 not in classes or len(set(classes)) < 2:
        return False
    changes = sum(a != b for a, b in zip(classes, classes[1:], strict=False))
    return changes >= 0.3 * len(classes)


MIN_CHARS, MAX_CHARS = 8, 4096
"""A value shorter (could not be told apart from text) or longer (a document) is not taken."""
PATH_START = re.compile(r"\.{0,2}/|~[\w.-]*/|~$|[A-Za-z]:\\(?=[^\\/:*?\"<>|]*(?:\\|$))")
"""A path: ``/…``, ``./…``, ``../…``, ``~``, ``~/…``, ``~ana/…`` or Windows' ``C:\\Users\\ana`` (what
``pwd = os.getcwd()`` holds there); a password that starts with ``~`` (``~Summer2024``) is none."""


_URL_START = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://")


def url_password(value: str) -> str | None:
    """The password a URL carries (``postgresql://analyst:…@db/sales``, a JDBC URL's
    ``?user=ana&password=…``), whatever holds it: a notebook's ``DATABASE_URL``, ``MONGO_URI`` or
    ``redis_url`` are named as no credential, and the URL went whole to the model. Its password as
    the driver reads it (unquoted: the sanitizer also redacts its URL-quoted forms); one shorter
    than :data:`MIN_CHARS` with what stands before it in the URL (redacting a short word everywhere
    would hide it from every text, and the sanitizer keeps no shorter secret)."""
    if len(value) > MAX_CHARS or "://" not in value:
        return None
    url = value[5:] if value[:5].lower() == "jdbc:" else value
    if not _URL_START.match(url):
        return None
    try:
        parts = urlsplit(url)
        raw = parts.password
    except ValueError:  # a malformed host ('http://[x'): no URL
        return None
    if raw:
        password, written = unquote(raw), f":{raw}@"
    else:
        key, password = next(((k, v) for k, v in parse_qsl(parts.query) if k.lower() in _QUERY_KEYS), ("", ""))
        written = f"{key}={password}"
    if not password:
        return None
    if len(password) >= MIN_CHARS:
        return password
    end = value.find(written) + len(written) if written in value else -1
    return value[max(end - MIN_CHARS, 0):end] if end >= MIN_CHARS else None


_QUERY_KEYS = ("password", "pwd")


# A connection string's secret keys: ODBC/ADO.NET (PWD=…;), libpq's keywords (password=… ),
# an Azure storage or service bus string (AccountKey=…; SharedAccessKey=…;).
CONNECTION_KEYS = ("password", "pwd", "accountkey", "sharedaccesskey")
_PASSWORD_KEYS = ("password", "pwd")
MAX_CONNECTION_CHARS = 1_024
"""A longer string (a document, a cell's code) is not read as a connection string."""
MAX_KEYS_SEEN = 8
"""Occurrences of each key looked at in one string (a connection string names its password once)."""
_CONN_VALUE = re.compile(r"\s*=\s*(\{[^}]*\}|'[^']*'|[^;\s]+)")


def connection_secrets(value: str) -> tuple[str, ...]:
    """The secrets a connection string carries (``…;UID=ana;PWD=…;``, ``host=db password=…``,
    ``…;AccountKey=…;``), whatever holds it: ``conn_str`` and ``AZURE_STORAGE_CONNECTION_STRING`` name
    no credential. Each value as written (braces and quotes taken off); one shorter than
    :data:`MIN_CHARS` with its key (``PWD=pw``), as :func:`url_password` keeps a short one.

    The keys are found with ``str.find`` (in C): a regex over every string of a namespace (25,000
    strings of code holding ``=``) took seconds at each prompt."""
    if len(value) > MAX_CONNECTION_CHARS or "=" not in value:
        return ()
    low = value.lower()
    if len(low) != len(value):  # a letter whose lower case is longer ('İ'): positions would not match
        low = "".join(c.lower()[0] for c in value)
    found: list[tuple[int, str]] = []
    for key in CONNECTION_KEYS:
        at, seen = low.find(key), 0
        while at != -1 and seen < MAX_KEYS_SEEN:  # a script naming $PWD on every line is no connection
            seen += 1
            end = at + len(key)
            match = _CONN_VALUE.match(value, end)
            if match and (at == 0 or value[at - 1] == ";" or value[at - 1].isspace()):
                raw = match.group(1)
                secret = raw[1:-1] if raw[:1] in "{'" and len(raw) > 1 else raw
                # PWD=/home/ana in a captured `env` is a folder; an account key may start with "/".
                if secret and (key not in _PASSWORD_KEYS or not PATH_START.match(secret)):
                    found.append((at, secret if len(secret) >= MIN_CHARS else value[max(match.end() - MIN_CHARS, 0):
                                                                                    match.end()]))
            at = low.find(key, end)
    return tuple(secret for _, secret in sorted(found))


SIGNATURE_KEYS = frozenset({"sig", "signature", "x_amz_signature", "x_amz_security_token", "x_goog_signature"})
"""A query's keys that sign the URL itself (an Azure SAS, a presigned S3 or GCS URL): whoever has it
reads (or writes) what it names, whatever the value's shape."""
MAX_QUERY_ITEMS = 32


def query_tokens(value: str) -> tuple[str, ...]:
    """The tokens a URL's query carries (``?api_key=…``, Google's ``&key=AIza…``, ``access_token=…``,
    an Azure SAS's ``sig=…``), as the server reads them (unquoted: the sanitizer redacts their
    URL-quoted forms too): a key named as a token with a value shaped like a generated one, or a
    signature. A password in the query is :func:`url_password`'s."""
    if len(value) > MAX_CHARS or "://" not in value or "?" not in value or "=" not in value:
        return ()
    try:
        query = urlsplit(value[5:] if value[:5].lower() == "jdbc:" else value).query
    except ValueError:
        return ()
    found = []
    for key, token in islice(parse_qsl(query), MAX_QUERY_ITEMS):
        name = key.translate(_SEPARATORS).lower()
        if name in _QUERY_KEYS or not MIN_CHARS <= len(token) <= MAX_CHARS:
            continue
        if name in SIGNATURE_KEYS or (_TOKEN_NAME.fullmatch(name) or _PASSWORD_NAME.fullmatch(name)) \
                and looks_like_token(token):
            found.append(token)
    return tuple(found)


def embedded_secrets(value: str) -> tuple[str, ...]:
    """The secrets inside ``value`` whatever its name: a URL's password and query tokens, a
    connection string's."""
    password = url_password(value)
    found = (password, *query_tokens(value)) if password else query_tokens(value)
    return (*found, *connection_secrets(value)) if found else connection_secrets(value)


__all__ = ["CONNECTION_KEYS", "MAX_CHARS", "MAX_CONNECTION_CHARS", "MIN_CHARS", "PATH_START", "SIGNATURE_KEYS",
           "connection_secrets", "embedded_secrets", "looks_like_token", "query_tokens", "url_password"]
