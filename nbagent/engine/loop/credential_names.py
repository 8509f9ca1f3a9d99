"""The names that hold credentials, in a kernel's variables, a mapping's keys and a table's columns
(shared by :mod:`.kernel_secrets`, :mod:`.embedded_secrets` and :mod:`.frame_secrets`)."""

from __future__ import annotations

import re

# A secret by its name alone (any value, passphrases with spaces included) ...
PASSWORD_NAME = re.compile(r"(?i)(?:.*_)?(?:PASSWORD|PASSWD|PASSPHRASE|SECRET|SECRET_KEY|PRIVATE_KEY)(?:_.*)?"
                           r"|(?:.+_)?(?:PWD?)|.+_PASS")  # pw = getpass(), DB_PASS, mysql_pwd (not pass_rate;
# PWD, the working folder, is a path: paths are never taken)
# ... and a name that holds a secret only when its value is shaped like a generated one.
TOKEN_NAME = re.compile(r"(?i)(?:.*_)?(?:API_?KEY|ACCESS_KEY|ACCOUNT_KEY|STORAGE_KEY|TOKEN|CREDENTIALS?|AUTH"
                        r"|WEBHOOK_URL|DSN|KEY)(?:_.*)?")  # KEY: openai_key (sort_key = "date" is no token)
WEAK_PASSWORD_NAME = re.compile(r"(?i)(?:.+_)?PWD?|.+_PASS")
SEPARATORS = str.maketrans("- .", "___")
"""How a mapping's keys separate words besides ``_``: HTTP headers (``X-Api-Key``, Azure's ``api-key``),
a spreadsheet's or YAML file's labels (``API Key``, ``db.password``)."""
AUTHORIZATION = re.compile(r"(?i)(?:PROXY_)?AUTHORIZATION")
FRAME_TOKEN_NAME = re.compile(r"(?i)(?:.*_)?(?:API_?KEY|ACCESS_KEY|ACCOUNT_KEY|STORAGE_KEY|CLIENT_SECRET"
                              r"|(?:ACCESS|REFRESH|AUTH|BEARER|API|ID|SESSION|OAUTH)_?TOKEN|CREDENTIALS?|WEBHOOK_URL|DSN)")
"""A table's column of tokens: a mapping key's rule without its bare ``key`` and ``token`` (a table's
``join_key``, ``primary_key`` and ``next_page_token`` hold ids, and its uuids look generated)."""


def frame_credential_name(label: str) -> bool:
    """Whether a frame's column label names a credential (words split by ``-``, a space or ``.``
    too): a password's name, an ``Authorization``, or a token's by :data:`FRAME_TOKEN_NAME`."""
    key = label.translate(SEPARATORS)
    return bool(PASSWORD_NAME.fullmatch(key) or FRAME_TOKEN_NAME.fullmatch(key) or AUTHORIZATION.fullmatch(key))


__all__ = ["AUTHORIZATION", "FRAME_TOKEN_NAME", "PASSWORD_NAME", "SEPARATORS", "TOKEN_NAME", "WEAK_PASSWORD_NAME",
           "frame_credential_name"]
