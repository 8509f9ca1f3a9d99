"""The names that hold credentials, in a kernel's variables, a mapping's keys and a table's columns
(shared by :mod:`.kernel_secrets`, :mod:`.embedded_secrets` and :mod:`.frame_secrets`)."""

from __future__ import annotations

import re

_ABOUT = (r"(?:STRENGTH|LENGTH|LEN|MIN|MAX|POLICY|SCORE|ENTROPY|EXPIRY|EXPIRES|EXPIRED|EXPIRATION|AGE|DAYS|CHANGED"
          r"|UPDATED|CREATED|AT|COUNT|ATTEMPTS|REQUIRED|RULES?|PATTERN|REGEX|LABEL|PROMPT|FIELD|COLUMN"
          r"|NAME|(?<!SECRET_)ID|ARN|TYPE|VERSION|FORMAT|SIZE|LIMIT|TTL|ENABLED|SCOPES?)")
"""The last word of a name about a password, not of one (``password_strength``, ``password_min_length``,
``password_changed_at``, ``SECRET_NAME``): a DataFrame's ``password_strength`` column was hidden (review of atk21).
Never ``SECRET_ID``: HashiCorp Vault's AppRole ``secret_id`` (``VAULT_SECRET_ID``) is the login credential
itself, printed whole to the model once ``ID`` was taken for an id's name (attacker pass 23)."""
ABOUT_CREDENTIAL = re.compile(r"(?i).+_" + _ABOUT)
"""A name about a credential, by its last word (``SECRET_NAME=db-credentials``, ``TOKEN_LIMIT=409600``,
``API_KEY_ID``): where a printed setting's value is kept from the model by its name alone (the
environment's rule), such a name's is not. Not a URL's or a header's (``SECRET_URL``, a webhook's,
holds the secret in its path; ``TOKEN_HEADER``, ``X-Api-Key: …``)."""
# A secret by its name alone (any value, passphrases with spaces included) ...
PASSWORD_NAME = re.compile(r"(?i)(?!(?:.*_)?(?:PASSWORD|PASSWD|PASSPHRASE|SECRET|PWD?)_(?:.*_)?" + _ABOUT + r"$)"
                           r"(?:(?:.*_)?(?:PASSWORD|PASSWD|PASSPHRASE|SECRET|SECRET_KEY|PRIVATE_KEY)(?:_.*)?"
                           r"|(?:.+_)?(?:PWD?)|.+_PASS)")  # pw = getpass(), DB_PASS, mysql_pwd (not pass_rate;
# PWD, the working folder, is a path: paths are never taken; not a name about one: password_strength)
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

KEYED_NAME = re.compile(r"(?i)(?:[a-z0-9]+_)*(?:PASSWORD|PASSWD|PASSPHRASE|PWD|SECRET|SECRET_KEY|PRIVATE_KEY"
                         r"|CLIENT_SECRET|API_?KEY|ACCESS_KEY|ACCOUNT_KEY|STORAGE_KEY|(?:[a-z]+_?)?TOKEN"
                         r"|CREDENTIALS?|WEBHOOK_URL|DSN|AUTHORIZATION)")
"""A key that is a credential's name itself (``password``, ``db_password``, ``api_token``), not a name
about one (``password_reset``, ``password_hash``, ``password_min_length``, ``token_count``, ``SECRET_NAME``):
the rule for a name kept as data beside its value (a settings table, a Kubernetes env entry)."""


_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def snake_name(name: str) -> str:
    """``name`` with its words split by ``_`` (``DbPassword``, ``db.password``: ``Db_Password``, ``db_password``)."""
    return _CAMEL.sub("_", name).translate(SEPARATORS)


def keyed_name(name: str) -> bool:
    """Whether ``name``, kept as data beside a value (``DB_PASSWORD``, ``DbPassword``, ``db.password``), is
    a credential's name itself by :data:`KEYED_NAME`."""
    return KEYED_NAME.fullmatch(snake_name(name)) is not None


def frame_credential_name(label: str) -> bool:
    """Whether a frame's column label names a credential (words split by ``-``, a space or ``.``
    too): a password's name, an ``Authorization``, or a token's by :data:`FRAME_TOKEN_NAME`."""
    key = label.translate(SEPARATORS)
    return bool(PASSWORD_NAME.fullmatch(key) or FRAME_TOKEN_NAME.fullmatch(key) or AUTHORIZATION.fullmatch(key))


__all__ = ["ABOUT_CREDENTIAL", "AUTHORIZATION", "FRAME_TOKEN_NAME", "KEYED_NAME", "PASSWORD_NAME", "SEPARATORS", "TOKEN_NAME",
           "WEAK_PASSWORD_NAME", "frame_credential_name", "keyed_name", "snake_name"]
