"""The credentials a text gives in the other forms of a name beside a value: a command line's flag
(``mysql --password=…``, ``cli --api-token …``), an XML element (Maven's ``<password>…</password>``),
and an HTTP header line (``Authorization: Basic …``, as ``http.client``'s debug output and a raw
request print it). :mod:`.assigned_secrets` reads ``NAME=value`` lines and :mod:`.kernel_secrets`
named literals; these were shown whole (a printed command, a config file ``read_file`` showed).
The same rules decide as for a mapping's keys (:func:`~.named_values.named_secret`): a password's
name takes any value but a path, a token's a value shaped like a generated one.
"""

from __future__ import annotations

import re

from .credential_names import AUTHORIZATION, SEPARATORS
from .embedded_secrets import MAX_CHARS, MIN_CHARS
from .named_values import named_secret

_FLAG = re.compile(r"(?<![\w-])--(?P<name>[A-Za-z][\w-]{1,40})(?:=|[ \t]+)(?P<q>[\"']?)(?P<value>[^\s\"'<>]{1,256})(?P=q)")
_METAVAR = re.compile(r"[A-Z][A-Z0-9_]*[\])},;]*")
"""``--password PASSWORD`` in a command's help (argparse's metavar): a placeholder, not the value."""
_ELEMENT = re.compile(r"<(?P<name>[A-Za-z][\w.-]{0,40})>(?P<value>[^<>\s]{1,256})</(?P=name)>")
_HEADER = re.compile(r"(?im)(?:(?<=\\n)|(?<![\w-]))(?P<name>(?:proxy-)?authorization)[ \t]*:[ \t]*(?P<value>[^\r\n'\"\\]{1,512})")
_CURL_USER = re.compile(r"(?<![\w-])(?:-u|--user)[ \t]+(?P<q>[\"']?)[^\s:\"']{1,64}:(?P<value>[^\s\"']{1,256})(?P=q)")
"""curl's ``-u user:password`` (``--user``): the user's name beside its password."""
_WORDS = ("pass", "pw", "secret", "token", "key", "auth", "credential")


def _authorization(value: str) -> str | None:
    scheme, space, rest = value.strip().partition(" ")
    secret = rest.strip() if space and rest.strip() else value.strip()
    # One credential, no prose: "Authorization: see the docs" names none.
    return secret if MIN_CHARS <= len(secret) <= MAX_CHARS and not any(ch.isspace() for ch in secret) else None


def flag_secrets(text: str) -> list[str]:
    """The values ``text``'s flags, XML elements and ``Authorization`` header lines give credentials'
    names, and curl's ``-u user:password`` its password."""
    found: list[str] = []
    if "-u" in text:
        found += [m.group("value") for m in _CURL_USER.finditer(text) if MIN_CHARS <= len(m.group("value")) <= MAX_CHARS]
    low = text.lower()
    if not any(word in low for word in _WORDS):  # one look before the patterns run
        return found
    if "--" in text:
        found += [m.group("value") for m in _FLAG.finditer(text)
                  if not _METAVAR.fullmatch(m.group("value")) and named_secret(m.group("name"), m.group("value"))]
    if "</" in text:
        found += [m.group("value") for m in _ELEMENT.finditer(text) if named_secret(m.group("name"), m.group("value"))]
    if "authorization" in low:
        for match in _HEADER.finditer(text):
            secret = _authorization(match.group("value"))
            if secret is not None and AUTHORIZATION.fullmatch(match.group("name").translate(SEPARATORS)):
                found.append(secret)
    return found


__all__ = ["flag_secrets"]
