"""The credentials a text keeps as a name beside its value, the name being data itself: a Kubernetes
or ECS environment entry (``- name: DB_PASSWORD`` then ``value: …``), .NET's ``<add key="Password"
value="…"/>``, Spring's ``<property name="password" value="…"/>``, Java's XML properties and a
printed AWS SSM ``SecureString`` parameter.
"""

from __future__ import annotations

import re

from .credential_names import keyed_name
from .embedded_secrets import MIN_CHARS
from .value_rules import credential_value, named_property

_NAME_VALUE = re.compile(r"(?:name|key)(?P<kq>[\"']?)[ \t]*[:=][ \t]*(?P<nq>[\"']?)(?P<name>[A-Za-z_][\w.\-]{0,63})(?P=nq)"
                         r"(?:[ \t]*,)?\s{1,80}(?:-[ \t]+)?(?P<vq>[\"']?)value(?P=vq)[ \t]*[:=][ \t]*(?P<q>[\"']?)"
                         r"(?P<value>[^\s\"',}]{%d,256})(?P=q)" % MIN_CHARS)
"""A setting kept as a name beside its value: a Kubernetes or ECS environment entry (``- name:
DB_PASSWORD`` then ``value: …``, ``{"name": "DB_PASSWORD", "value": "…"}``), .NET's ``<add
key="Password" value="…"/>``, Spring's ``<property name="password" value="…"/>``."""
_SECURE_STRING = re.compile(r"(?P<tq>[\"']?)Type(?P=tq)[ \t]*[:=][ \t]*(?P<sq>[\"']?)SecureString(?P=sq)[ \t]*,?\s{0,80}"
                            r"(?P<vq>[\"']?)Value(?P=vq)[ \t]*[:=][ \t]*(?P<q>[\"'])(?P<value>[^\"'\n]{1,4096})(?P=q)")
"""A printed AWS SSM parameter: ``'Type': 'SecureString', 'Value': '…'`` (its value whatever its name)."""
_KEYED_TAIL = (r"=(?P<nq>[\"'])(?P<name>[^\"'<>]{1,64})(?P=nq)[^<>]{0,200}>"
               r"(?P<value>[^<>\s]{%d,256})</(?P<tag>[A-Za-z][\w.-]{0,40})>" % MIN_CHARS)
_KEYED_ELEMENTS = tuple(re.compile(word + _KEYED_TAIL) for word in ("key", "name"))
"""Java's XML properties: ``<entry key="db.password">…</entry>``. Each pattern starts with its literal
(the element's opening is checked in :func:`_keyed_elements`): one starting at ``<`` scanned 200 KB
of HTML whose cells carry ``name=`` in 15 ms, not 2 (review of atk21)."""


def names_beside_values(text: str, low: str) -> list[str]:
    """The values a ``name``/``key`` beside a ``value`` (:data:`_NAME_VALUE`), or an element's ``key``
    attribute (:data:`_KEYED_ELEMENTS`), names as credentials."""
    found: list[str] = []
    if "value" in low:
        # An unquoted value cut short at a quote is code, not a value: ``value = os.environ['DB_PASSWORD']``
        # gave ``os.environ[`` (review of atk21), hidden then wherever code named the environment.
        found += [v for m in _NAME_VALUE.finditer(text) if _named_here(text, m)
                  and (m.group("q") or text[m.end():m.end() + 1] not in ("'", '"'))
                  for v in keyed_property(m.group("name"), m.group("value"))]
    if "SecureString" in text:
        found += [m.group("value") for m in _SECURE_STRING.finditer(text) if credential_value(m.group("value"))]
    if "</" in text and ("key=" in text or "name=" in text):
        found += [v for m in _keyed_elements(text) for v in keyed_property(m.group("name"), m.group("value"))]
    return found


def keyed_property(name: str, value: str) -> list[str]:
    """``value`` when ``name``, kept as data beside it (a Kubernetes env entry, an XML ``key=``), is a
    credential's name itself (:data:`~.credential_names.KEYED_NAME`, as a settings table's key): not a name
    about one (review of atk21: ``SECRET_NAME``/``db-credentials``, ``password_strength``/``moderate-high``)."""
    return named_property(name, value) if keyed_name(name) else []


def _keyed_elements(text: str) -> list[re.Match[str]]:
    """:data:`_KEYED_ELEMENTS`' matches whose attribute is in the opening tag of the element they close
    (``<entry key="…">``: the tag's name, then attributes after blanks, up to the attribute)."""
    found: list[re.Match[str]] = []
    for pattern in _KEYED_ELEMENTS:
        for m in pattern.finditer(text):
            start, tag = m.start(), m.group("tag")
            lt = text.rfind("<", max(0, start - 242), start)
            opening = text[lt + 1:start] if lt >= 0 else ""
            if (opening.startswith(tag) and opening[len(tag):len(tag) + 1].isspace() and opening[-1:].isspace()
                    and ">" not in opening):
                found.append(m)
    return found


def _named_here(text: str, match: re.Match[str]) -> bool:
    """Whether ``name``/``key`` starts a word, its opening quote matching its closing one (checked here:
    a look-behind in the pattern made it scan 200 KB of a table naming ``value`` in 10 ms, not 1)."""
    before = text[match.start() - 1] if match.start() else ""
    quote = match.group("kq")
    return (before == quote and (match.start() < 2 or not (text[match.start() - 2].isalnum() or
                                                                text[match.start() - 2] == "_"))) if quote else \
        not (before.isalnum() or before == "_")


__all__ = ["keyed_property", "names_beside_values"]
