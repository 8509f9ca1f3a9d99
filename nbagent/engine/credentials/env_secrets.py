"""The environment's secrets: which variables hold credentials, and the environment a tool's
process gets without them.

A variable named as a credential (``GITHUB_TOKEN``, ``DB_PASSWORD``, ``PGPASSWORD``), or holding a
URL or connection string with a password in it, is a secret for the model as ``secret_env`` is,
and the shell tool's process never gets it (:class:`ChildEnvironment`).
"""

from __future__ import annotations

import os
import re
from typing import Iterable, Iterator, Mapping

from .credential_names import ABOUT_CREDENTIAL
from .embedded_secrets import embedded_secrets
from .key_shapes import KEY_SHAPES, may_hold_key
from .named_values import named_secret

# Variables named as credentials are (OPENAI_API_KEY, GITHUB_TOKEN, AWS_SECRET_ACCESS_KEY, DB_PASSWORD,
# HF_TOKEN): the tool's process never gets them, whatever they hold. Also the ones tools name their
# own way, which the words miss: PostgreSQL's PGPASSWORD and MySQL's MYSQL_PWD (PWD alone is the
# working folder), KAGGLE_KEY, an Azure storage ACCOUNT_KEY, a GitHub PAT, a Slack WEBHOOK_URL.
CREDENTIAL_NAME = re.compile(r"(?i)(?:.*_)?(?:API_?KEY|TOKEN|SECRET|PASSWORD|PASSWD|PRIVATE_KEY|CREDENTIALS?"
                             r"|ACCOUNT_KEY|STORAGE_KEY|PAT|WEBHOOK_URL)(?:_.*)?|PGPASSWORD|MYSQL_PWD|KAGGLE_KEY")


SDK_HEADERS_ENV = "ANTHROPIC_CUSTOM_HEADERS"
"""``Name: Value`` lines the Anthropic SDK adds to every request: where a gateway's key is often kept
(``x-portkey-api-key: …``, ``Helicone-Auth: Bearer …``), as Claude Code reads it too."""
# By the words of a header's name, not within one (``x-keyword`` holds no key), and not a name
# about one by its last word (``Helicone-Session-Id``/``-Name``/``-Path``, ``X-Token-Budget``: a
# gateway's tracing headers, whose values, redacted, hid ordinary words and paths; review of pass 24).
_CREDENTIAL_HEADER = re.compile(r"(?i)(?:.*[-_])?(?:x?api[-_]?key|key|(?:[a-z]+[-_]?)?auth(?:orization)?|(?:[a-z]+[-_]?)?token"
                                r"|secret|passw(?:or)?d|pass|cookie|session|signature|sig|jwt|credentials?)(?:[-_].*)?")
_ABOUT_HEADER = re.compile(r"(?i).+[-_](?:id|name|path|budget|limit|count|type|version|ttl|enabled|expiry|expires"
                           r"|size|max|min|mode|tag|tags|url)")
_AUTH_SCHEME = re.compile(r"(?i)bearer|basic|token|digest|key|apikey|hmac|negotiate|sso-key")


def sdk_header_secrets(value: str | None) -> tuple[str, ...]:
    """The values of the credential headers (named like one) in an ``ANTHROPIC_CUSTOM_HEADERS`` value,
    each also without its scheme word (``Bearer``): the variable's name is no credential's, so a
    cell's ``print(os.environ)`` or the shell tool's ``env`` sent the gateway key to the model."""
    found: list[str] = []
    for line in (value or "").split("\n"):
        name, colon, header = line.partition(":")
        header = header.strip()
        name = name.strip()
        if colon and header and _CREDENTIAL_HEADER.fullmatch(name) and not _ABOUT_HEADER.fullmatch(name):
            found.append(header)
            scheme, blank, rest = header.partition(" ")
            if blank and rest.strip() and _AUTH_SCHEME.fullmatch(scheme):  # not "Course analysis"'s "analysis"
                found.append(rest.strip())
    return tuple(found)


def credential_setting(name: str) -> bool:
    """Whether a printed ``NAME=value`` setting's ``name`` is a credential's by the environment's rule,
    not a name about one (:data:`~.credential_names.ABOUT_CREDENTIAL`: whose value the model may need;
    the environment's own values stay by :data:`CREDENTIAL_NAME` alone)."""
    return CREDENTIAL_NAME.fullmatch(name) is not None and ABOUT_CREDENTIAL.fullmatch(name) is None


def credential_env_values() -> tuple[str, ...]:
    """The values of the environment's variables named as credentials (:data:`CREDENTIAL_NAME`):
    secrets for the model too, not only kept from the shell tool. A cell's ``env = dict(os.environ)``
    or ``print(os.environ)`` sent ``GITHUB_TOKEN``, ``AWS_SECRET_ACCESS_KEY`` and ``JUPYTER_TOKEN``
    (which runs code in any kernel of the server) to the model in the kernel context; so did any
    variable's URL or connection string with a password (``DATABASE_URL``): its password is taken too."""
    # By name, then get: another thread (the serve server's) may read while a cell changes os.environ.
    pairs = [(name, value) for name in list(os.environ) if (value := os.environ.get(name))]
    # Under any other name, a URL's or connection string's password (DATABASE_URL, an Azure one).
    # A name of a key, password or token by the notebook's rule too (OPENAI_KEY, AZURE_OPENAI_KEY, DB_PASS:
    # no credential word, so print(os.environ) sent them to the model and the shell tool got them).
    return tuple(s for name, value in pairs for s in ((value,) if CREDENTIAL_NAME.fullmatch(name)
                                                       or named_secret(name, value) else embedded_secrets(value))
                 ) + sdk_header_secrets(os.environ.get(SDK_HEADERS_ENV))


def child_environment(env_names: Iterable[str], secrets: Iterable[str]) -> dict[str, str]:
    """``os.environ`` without the secret variables: the listed names, names of credentials
    (:data:`CREDENTIAL_NAME`), and any other variable whose value holds a secret value (a URL with
    the token in it) or a credential of :data:`KEY_SHAPES`."""
    names, values = set(env_names), tuple(secrets)
    return {k: v for k, v in os.environ.items()
            if k not in names and not CREDENTIAL_NAME.fullmatch(k) and not named_secret(k, v)
            and not (k == SDK_HEADERS_ENV and sdk_header_secrets(v))
            and not any(s in v for s in values)
            and not (may_hold_key(v) and KEY_SHAPES.search(v))}


class ChildEnvironment(Mapping[str, str]):
    """:func:`child_environment`, made when first read: most tool calls start no process, and
    copying ``os.environ`` for each turn's first call cost more than the call."""

    def __init__(self, env_names: Iterable[str], secrets: Iterable[str]) -> None:
        self._names, self._secrets = tuple(env_names), tuple(secrets)
        self._env: dict[str, str] | None = None

    def _data(self) -> dict[str, str]:
        if self._env is None:
            self._env = child_environment(self._names, self._secrets)
        return self._env

    def __getitem__(self, name: str) -> str:
        return self._data()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data())

    def __len__(self) -> int:
        return len(self._data())


__all__ = ["CREDENTIAL_NAME", "SDK_HEADERS_ENV", "ChildEnvironment", "child_environment", "credential_env_values",
           "credential_setting", "sdk_header_secrets"]
