"""The credentials a list gives by the names it holds beside values (attacker pass 20): a mapping
kept as (name, value) pairs (``cp.items("db")``, ``parse_qsl(body)``), a command line kept as its
arguments (``["mysqldump", "--password", "…"]``) and an environment's ``NAME=value`` items. Read by
:mod:`.kernel_secrets`'s walk, within bounds of their own.
"""

from __future__ import annotations

import re
from itertools import islice
from typing import cast

from .assigned_secrets import assigned_secrets
from .credential_names import keyed_name, snake_name
from .flag_secrets import dash_passwords, flag_secrets, gap_passwords, mysql_passwords
from .named_values import named_secret
from .value_rules import placeholder

MAX_PAIRS_PER_LIST = 100
"""Items of a list of (name, value) pairs looked at (a config section's, a query's, a header list's)."""


MAX_ARGV_ITEMS = 64
"""Items of a list of strings read as a command line's arguments (``["mysql", "--password", pw]``)."""
MAX_ARGV_LISTS = 2_000
"""Lists read as command lines in one namespace (100 dicts of 1,000 token lists took 2 s more a prompt)."""
_ENV_ITEM = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=[^\s'\"]")
"""``NAME=value`` as an environment's list holds it: no space around ``=``, the value unquoted."""


def _argv_flags(items: list[str]) -> list[str]:
    """A list's flags: ``--name=value`` items as a command line's, and ``"--password"`` followed by its
    item whole (``"correct horse battery"``: the items were joined by blanks, giving ``correct``)."""
    found = flag_secrets(" ".join(item for item in items if item.startswith("--") and ("=" in item or ":" in item)))
    for flag, value in zip(items, items[1:], strict=False):
        if flag.startswith("--") and "=" not in flag and not value.startswith("-") and not placeholder(value) \
                and not flag.endswith("-stdin") and named_secret(flag[2:], value):  # ``--password-stdin``: no value
            found.append(value)
    return found


def _short_flags(items: list[str]) -> list[str]:
    """curl's ``"-u", "ana:…"`` (``"-uana:…"``) and a MySQL client's ``"-p…"``, each item whole
    (``"-pcorrect horse"`` is one argument: a joined line would give its first word)."""
    found: list[str] = []
    for flag, value in zip(items, items[1:], strict=False):
        if flag == "-u" and ":" in value and not value.startswith("-"):
            found += flag_secrets(f"-u '{value}'") if "'" not in value else []
    found += [secret for item in items if item.startswith("-u") and len(item) > 2 for secret in flag_secrets(item)]
    found += gap_passwords(items)  # ``["sshpass", "-p", "correct horse", "ssh", host]``
    if any("mysql" in item.lower() or "mariadb" in item.lower() for item in items):
        found += [secret for item in items if item.startswith("-p") and len(item) > 2
                  for secret in mysql_passwords(f"mysql -p'{item[2:]}'" if "'" not in item else f"mysql {item}")]
    return found


def argv_secrets(value: list[object] | tuple[object, ...]) -> list[str]:
    """The credentials a command line kept as a list of arguments gives by its flags
    (``cmd = ["mysqldump", "--password", "…", "sales"]``, ``subprocess.run(cmd)``'s list), and a
    list of ``NAME=value`` variables (``env = ["DB_PASSWORD=…"]``) by their names: only a short
    list of strings."""
    if not 1 <= len(value) <= MAX_ARGV_ITEMS or not all(type(v) is str for v in value):
        return []
    items = cast("list[str]", value)
    if any(item.lower() in ("docker", "podman", "nerdctl") for item in items[:2]):  # ``-u``/``--user`` is ``user:group``
        items = [item for item in items if not item.startswith(("-u", "--user"))]
    flags = _argv_flags(items) if any(v.startswith("--") for v in items) else []
    flags += _short_flags(items) if any(v.startswith("-") and not v.startswith("--") for v in items) else []
    flags += dash_passwords(items)  # ``["keytool", "-storepass", …]``, ``["sqlplus", "scott/…@orcl"]``
    # ``environment=["POSTGRES_PASSWORD=…"]``: a container's or a process's variables, one a line;
    # only items written as such (IPython's ``In`` holds cells such as ``token = 'the cat sat'``).
    variables = [v for v in items if "=" in v and _ENV_ITEM.match(v) and "\n" not in v]
    lines = assigned_secrets("\n".join(variables)) if variables else []
    return [*flags, *lines]


_ARGV_ITEM = re.compile(r"""[rRbBuU]?"([^"\\\n]*)"|[rRbBuU]?'([^'\\\n]*)'|[A-Za-z_][\w.]*""")
MAX_LISTED_ARGV = 200
"""Command lines written as lists read in one text (a printed output of 10,000 such lists took 100 ms more)."""
_ARGV_TOOLS = ("sqlplus", "sqlldr", "expdp", "impdp", "rman")
_ARGV_LIST = re.compile(r"\[\s*(?:" + _ARGV_ITEM.pattern + r")(?:\s*,\s*(?:" + _ARGV_ITEM.pattern + r")){1,63}\s*,?\s*\]")
"""A command line written as a list (``subprocess.run(["sshpass", "-p", "…", "ssh", host])``, and as
``CalledProcessError`` prints it, ``Command '['mysqldump', '--password', '…']' returned …``): its literals
and names (a name stands for no text), read as :func:`~.list_secrets.argv_secrets` reads a variable's list."""


def listed_argv_secrets(code: str, marked: bool) -> list[str]:
    """The credentials of the command lines ``code`` (a cell, a printed output) writes as lists of
    literals, read as :func:`argv_secrets` reads a variable's list; ``marked``: the code holds a flag
    or a credential's word (else only Oracle's tools, which need neither, are looked for)."""
    oracle = any(tool in code.lower() for tool in _ARGV_TOOLS)
    if not (oracle or (marked and ("'-" in code or '"-' in code))):  # a flag's item: ``"-p"``, ``'--password'``
        return []
    lists = (match.group() for match in _ARGV_LIST.finditer(code))
    return [secret for listed in islice((x for x in lists if oracle or _command_like(x)), MAX_LISTED_ARGV)
            for secret in argv_secrets(_argv_items(listed))]


def _command_like(listed: str) -> bool:
    """Whether a list display may be a command line's: an item starting with ``-`` (a printed table of
    8,000 rows of plain words is not read item by item: 50 ms)."""
    return "'-" in listed or '"-' in listed


def _argv_items(listed: str) -> list[object]:
    """The items of a list display ``_ARGV_LIST`` matched: a literal's text, a name's an empty one."""
    return [m.group(1) if m.group(1) is not None else m.group(2) or "" for m in _ARGV_ITEM.finditer(listed[1:])]


def key_value_pairs(value: list[object] | tuple[object, ...], most: int = MAX_PAIRS_PER_LIST) -> list[tuple[object, object]]:
    """The items of a mapping kept as a list of (name, value) pairs: ``configparser``'s
    ``cp.items("db")``, ``urllib.parse.parse_qsl(body)``, ``list(headers.items())``, JSON's
    ``[["user", "ana"], ["password", "…"]]``. Its names speak for its values as a dict's keys do, so
    ``[('host', 'db'), ('password', '…')]`` went to the model whole. Empty unless its first item is
    such a pair; the pairs among its first ``most`` items (at most :data:`MAX_PAIRS_PER_LIST`; exact
    types only: no user code runs)."""
    if not value or not _is_pair(value[0]):
        return []
    rows = islice(value, min(most, MAX_PAIRS_PER_LIST))
    return [(row[0], row[1]) for row in rows if _is_pair(row)]  # type: ignore[index]


MAX_ENTRY_ITEMS = 8
"""A mapping read for a name beside its value has at most this many items (an SSM parameter has 7)."""


def named_entry(items: list[tuple[object, object]]) -> list[tuple[object, object]]:
    """The (name, value) a mapping's ``name`` (or ``key``) and ``value`` items give: a Kubernetes or
    ECS environment entry loaded from its manifest, ``{"name": "DB_PASSWORD", "value": "…"}``, whose
    keys name no credential (``Name``/``Value`` too, as AWS writes them); and an AWS SSM parameter's
    ``Value`` whose ``Type`` is ``SecureString``, whatever its name (``/prod/db/password``: review of atk21,
    ``ssm.get_parameter(…, WithDecryption=True)``'s answer reached the model). Empty for any other mapping."""
    if len(items) > MAX_ENTRY_ITEMS:
        return []
    fields = {key.lower(): value for key, value in items if type(key) is str}
    name, value = fields.get("name", fields.get("key")), fields.get("value")
    if "value" not in fields:
        return []
    if fields.get("type") == "SecureString":
        return [("password", value)]
    if type(name) is not str or len(items) > 4 or not keyed_name(name):
        return []  # a name about a credential (``SECRET_NAME``, ``password_min_length``) is none
    # A form's field (``{"name": "password", "value": "Password"}``, ``"db_password"``/``"DB Password:"``)
    # names its label, not a password.
    label = type(value) is str and (_letters(value) == _letters(name) or placeholder(value))
    return [] if label else [(snake_name(name), value)]  # ``DbPassword`` as ``Db_Password``, the variables' rule


def _letters(text: str) -> str:
    return re.sub(r"[\W_]+", "", text.lower())


def _is_pair(row: object) -> bool:
    return type(row) in (tuple, list) and len(row) == 2 and type(row[0]) is str  # type: ignore[arg-type, index]


__all__ = ["MAX_ARGV_LISTS", "MAX_ENTRY_ITEMS", "MAX_PAIRS_PER_LIST", "argv_secrets", "key_value_pairs", "listed_argv_secrets",
           "named_entry"]
