"""How ``%agent mcp``'s trust view shows a ``.mcp.json`` server's ``env`` and ``headers`` values.

Two needs pull apart. An environment decides what the command runs: a received file's
``"PATH": "./.tools:/usr/bin"`` made a familiar ``uvx mcp-server-fetch`` start the repository's own
``./.tools/uvx`` (``PYTHONPATH``, ``NODE_OPTIONS=--require …``, ``LD_PRELOAD`` likewise), so the user
must read it before trusting the file (attacker pass 24). And the view is saved with the notebook:
a password the user wrote in their own file must not be printed there. So a value is shown piece by
piece, each secret-looking piece as ``…`` and the rest as written: masked whole, one decoy piece (a
``://`` or a generated-looking word) hid the ``./.tools`` in front of it again (review of pass 24).
"""

from __future__ import annotations

import re
import urllib.parse

LITERAL = "…"

_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s;,\"']*")
# The password of a scheme-less ``user:password@host`` (a proxy, Oracle's ``scott/tiger@db``): the
# piece right before an ``@`` that follows a ``:`` or ``/`` (an e-mail address, ``node_modules/@scope``, stay).
_USERINFO_PASSWORD = re.compile(r"(?<=[:/])[^\s:;,=/@'\"]+(?=@)")
# A value written after a credential's word (``--password X``, a netrc's ``password X``, ``token=X``).
_AFTER_CREDENTIAL_WORD = re.compile(
    r"(?i)(?<![A-Za-z])(?:pass(?:word|wd)?|pwd|secret|token|api[-_]?key|auth)[\"']?\s*[=:\s]\s*[\"']?([^\s;,\"'&]+)")
# A flag whose next argument is a credential (``--api-key X``, ``--password X``, ``-t``'s are not guessed).
_CREDENTIAL_FLAG = re.compile(r"(?i)--?[a-z0-9-]*(?:password|passwd|pwd|token|secret|api-?key|auth|key)")
# A query parameter named like a credential (``?token=…``, ``&api_key=…``, ``sig=…``).
_CREDENTIAL_QUERY = re.compile(r"(?i)[?&][^=&#]*(?:token|key|secret|sig|passw|pwd|auth|code)[^=&#]*=([^&#\s]+)")
_WORD = re.compile(r"[^\s:;,=@\"'()]+")
# Names of a password or signature that the credential words miss (``sshpass`` reads ``SSHPASS``;
# ``SMTP_PASS``, ``API_SIG``, ``SIGNATURE``, ``PRIVATE``, a ``PIN``); not ``GIT_ASKPASS``, a program, nor
# ``PRIVATE_REGISTRY_URL``, which may say where a package comes from.
_SECRET_NAME = re.compile(r"(?i)(?:^|_)(?:SSH)?PASS(?:PHRASE)?(?:$|_)|(?:^|_)SIG(?:NATURE)?(?:$|_)"
                          r"|(?:^|_)PRIVATE(?:_KEY)?$"
                          r"|(?:^|_)PIN(?:$|_)")


def masked(value: object) -> object:
    """A header's (or a credential-named ``env``) value as the trust view shows it: each ``${VAR}`` it
    reads kept (a received file's ``"X-Lang": "${GITHUB_TOKEN}"`` sends that token to the file's URL,
    which the user must see before trusting it), the literal text around it (and a default) shown as
    ``…`` (the user's own file may hold a token written out; the output is saved in the notebook)."""
    from ..tools.mcp.config import VAR_REFERENCE

    if not isinstance(value, str):
        return value  # refused when parsed; shown as it is
    parts, end = [], 0
    for match in VAR_REFERENCE.finditer(value):
        if match.start() > end:
            parts.append(LITERAL)
        parts.append("${" + match.group(1) + (":-" + LITERAL if match.group(2) is not None else "") + "}")
        end = match.end()
    if end < len(value):
        parts.append(LITERAL)
    return "".join(parts)


def shown_env(name: str, value: object) -> object:
    """An ``env`` value as the trust view shows it: :func:`masked` where its variable is named like a
    credential; else as written but each URL as its scheme and host (its user part, path or query
    may be a token: a Slack webhook, ``postgresql://u:pw@…``) and each piece that holds a secret by
    the environment's rules (a connection string's password, a generated-looking word, the password
    of ``user:pw@host``, the word after ``--password``) as ``…``."""
    from ..engine.credentials.named_values import named_secret
    from ..tools.mcp.config import credential_named

    if (not isinstance(value, str) or credential_named(name) or _SECRET_NAME.search(name)
            or named_secret(name, value)):
        return masked(value)
    pieces = _URL.split(value)
    urls = [_url_shown(url) for url in _URL.findall(value)]
    shown = [_unsecret(name, piece) for piece in pieces]
    return "".join(part for pair in zip(shown, [*urls, ""], strict=True) for part in pair)


def _unsecret(name: str, text: str) -> str:
    """``text`` (no URL in it) with each piece holding a secret as ``…``."""
    from ..engine.credentials.embedded_secrets import embedded_secrets, looks_like_token
    from ..engine.credentials.key_shapes import KEY_SHAPES
    from ..engine.credentials.output_secrets import output_secrets

    found = {*embedded_secrets(text), *output_secrets(f"{name}={text}\n")}
    found.update(m.group(1) for m in _AFTER_CREDENTIAL_WORD.finditer(text))
    found.update(m.group(0) for m in _USERINFO_PASSWORD.finditer(text))
    found.update(m.group(0) for m in KEY_SHAPES.finditer(text))
    # a generated-looking word, or a piece of a path (a webhook's ``/services/T…/B…/<token>``)
    found.update(piece for word in _WORD.findall(text) for piece in (word, *word.split("/")) if looks_like_token(piece))
    for secret in sorted((s for s in found if s), key=len, reverse=True):
        text = text.replace(secret, LITERAL)
    return text


def shown_args(args: object) -> object:
    """A server's ``args`` as the trust view shows them: each as written (they say what runs: a
    ``git+https://…/owner/repo`` is shown whole), but a credential in one as ``…``: the argument after
    ``--api-key`` / ``--password``, ``--token=…``, a URL's password or credential-named query value, a
    key's shape (the user's own file printed them into the saved output; review of pass 24)."""
    if not isinstance(args, list):
        return args
    shown: list[object] = []
    for i, arg in enumerate(args):
        after_flag = i > 0 and isinstance(args[i - 1], str) and _CREDENTIAL_FLAG.fullmatch(args[i - 1])
        shown.append(arg if not isinstance(arg, str) else masked(arg) if after_flag else shown_in_place(arg))
    return shown


def shown_in_place(text: str) -> str:
    """``text`` (an argument, a server's URL) with each credential in it as ``…``, the rest as written."""
    from ..engine.credentials.embedded_secrets import embedded_secrets
    from ..engine.credentials.key_shapes import KEY_SHAPES

    found = {*embedded_secrets(text), *(m.group(0) for m in KEY_SHAPES.finditer(text))}
    found.update(m.group(1) for m in _AFTER_CREDENTIAL_WORD.finditer(text))
    found.update(m.group(1) for m in _CREDENTIAL_QUERY.finditer(text))
    for secret in sorted((s for s in found if s), key=len, reverse=True):
        text = text.replace(secret, LITERAL)
    return text


def _url_shown(value: str) -> str:
    """A URL as its scheme and host, the rest ``…`` (a ``${VAR}`` in it stays named)."""
    if "${" in value:
        return str(masked(value))
    try:
        parts = urllib.parse.urlsplit(value.strip())
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return LITERAL
    return f"{parts.scheme}://{host}{port}/{LITERAL}" if parts.scheme and host else LITERAL


__all__ = ["LITERAL", "masked", "shown_args", "shown_env", "shown_in_place"]
