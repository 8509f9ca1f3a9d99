"""The secrets a notebook's kernel holds in its variables and its cells' code.

A notebook keeps credentials in variables (``db_password = "…"``, ``config = dotenv_values()``), not
only in the environment: their values are redacted from what the model reads like the environment's
(see :func:`credential_variable_values`). The rule is stricter than the environment's, because a
notebook's names are not a deployment's: ``pat`` is a regex pattern, ``eos_token`` is
``"<|endoftext|>"``, ``token_dir`` a path, and redacting such a value would hide it from the model
in every cell, output and result.
"""

from __future__ import annotations

import io
import re
import tokenize
from collections import OrderedDict, defaultdict
from functools import lru_cache
from itertools import islice
from types import GetSetDescriptorType, SimpleNamespace
from typing import Iterable, cast

from .assigned_secrets import MAX_TEXT_LINES_CHARS, assigned_secrets
from .cell_commands import command_marked, shell_lines, unescaped
from .credential_names import AUTHORIZATION as _AUTHORIZATION
from .credential_names import PASSWORD_NAME as _PASSWORD_NAME
from .credential_names import SEPARATORS as _SEPARATORS
from .credential_names import TOKEN_NAME as _TOKEN_NAME
from .embedded_secrets import CONNECTION_KEYS, MAX_CHARS, MIN_CHARS, embedded_secrets
from .flag_secrets import flag_secrets
from .frame_secrets import FRAME_BUDGETS, frame_columns
from .list_secrets import MAX_ARGV_LISTS, MAX_ENTRY_ITEMS, argv_secrets, key_value_pairs, listed_argv_secrets, named_entry
from .named_values import named_secret
from .text_records import RECORD_FIRSTS, TextScans
from .value_rules import placeholder

MAX_ITEMS_PER_MAPPING = 1_000
"""Items looked at in each mapping (a vocabulary of 100,000 words is not walked whole, and does not
use up what the mappings after it get)."""
MAX_MAPPINGS = 500
"""Mappings and objects walked in one namespace."""
MAX_DEPTH = 4
"""Levels walked below a variable (``config["services"]["db"]["auth"]["password"]``)."""
MAX_ROWS_PER_LIST = 20
"""Items of a list looked at for mapping rows (records share their keys: the first ones tell)."""
MAX_ROWS = 500
"""Mapping rows of lists walked in one namespace, besides :data:`MAX_MAPPINGS`."""
MAX_PAIRS = 5_000
"""(name, value) pairs of lists walked in one namespace (a corpus of (token, tag) pairs is not read whole)."""
_MAPPINGS = (dict, OrderedDict, defaultdict)  # C mappings: reading their items runs no user code
_CLASS_DICT = type.__dict__["__dict__"]  # a class's own namespace, read past any metaclass
_CLASS_MRO = type.__dict__["__mro__"]


def _fields(value: object, kind: type) -> Iterable[tuple[object, object]] | None:
    """The items of a plain mapping, the fields of a namedtuple, or the attributes of a ``SimpleNamespace`` or a dataclass
    instance (``cfg = Settings(db_password=…)``), read without running the object's code: its
    instance dictionary through the C slot every plain class has (a class whose ``__dict__`` is
    anything else, or a dataclass with slots, is not read). None for anything else."""
    if kind in _MAPPINGS:
        return cast("dict[object, object]", value).items()
    if kind is SimpleNamespace:
        return vars(value).items()  # a C type: its attributes are a plain dict
    mro = _CLASS_MRO.__get__(kind)
    if any(k is tuple for k in mro):  # a namedtuple (``Creds("ana", "…")``): its items through tuple's own code
        names = _CLASS_DICT.__get__(kind).get("_fields")
        if type(names) is tuple and all(type(n) is str for n in names):
            return list(zip(names, tuple.__iter__(cast("tuple[object, ...]", value)), strict=False))
        return None
    if not any("__dataclass_fields__" in _CLASS_DICT.__get__(k) for k in mro):
        return None
    slot = next((found for k in mro if (found := _CLASS_DICT.__get__(k).get("__dict__")) is not None), None)
    if type(slot) is not GetSetDescriptorType:
        return None
    namespace = slot.__get__(value, kind)
    return namespace.items() if type(namespace) is dict else None


_CELL_CODE = re.compile(r"_i{1,3}\d*")
"""IPython's names for the cells' code (``_i``, ``_ii``, ``_iii``, ``_i12``)."""
_LITERAL = re.compile(r"""(["'])((?:\\.|(?!\1)[^\\\n])*)\1""")
"""A one-line string literal (every one matched, so that a closing quote is never taken for an opening one)."""
_STRING_PREFIX = re.compile(r"""[rRbBuUfF]{0,2}(\"\"\"|'''|"|')""")


_QUOTED = r"""(?P<q>["'])(?P<value>(?:\\.|(?!(?P=q))[^\\\n])*)(?P=q)"""
_NAMED_LITERAL = re.compile(
    r"""(?:(?P<kq>["'])(?P<key>[^"'\n]{1,64})(?P=kq)\s*(?:\]\s*)?(?:=>|[:=])"""
    r"""|\b(?P<name>[A-Za-z_]\w{0,63})(?:[ \t]*:[ \t]*[\w.\[\],| ]{1,40}?)?[ \t]*(?:=>|:=|=))\s*"""
    r"""(?P<prefix>[rRbBuUfF]{0,2})""" + _QUOTED)
"""A literal given a name in the code: ``password="…"`` (a keyword argument or an assignment, with
a type too: ``db_password: str = "…"``; an f-string without a field; PHP's and Ruby's ``'password' =>
"…"``, Go's ``password := "…"``),
``{"X-Api-Key": "…"}``, ``headers["Authorization"] = "…"``."""
_NAMED_PAIR = re.compile(r"""\b(?P<name>[A-Za-z_]\w{0,63})\s*=\s*\(\s*[rRbBuU]{0,2}(["'])[^"'\n]*\2\s*,\s*"""
                         r"""[rRbBuU]{0,2}""" + _QUOTED + r"\s*\)")
"""``auth=("ana", "…")``: a (user, password) pair."""
_KEYED_PAIR = re.compile(r"""\(\s*(?P<kq>["'])(?P<key>[^"'\n]{1,64})(?P=kq)\s*,\s*(?P<prefix>[rRbBuUfF]{0,2})"""
                         + _QUOTED + r"\s*\)")
"""``("password", "…")``: a (name, value) pair, as ``configparser``'s ``items()``, ``parse_qsl`` and a
headers list hold them, in code or printed (``print(cp.items("db"))``)."""
_INLINE_SETTING = re.compile(r"(?:PASS|PWD|SECRET|TOKEN|KEY|AUTH|CRED)[A-Z0-9_]{0,20}=")
"""``PGPASSWORD=…`` set in a command line; keytool's ``-storepass …`` is found by ``pass ``."""
_NAME_WORDS = ("pass", "pw", "secret", "token", "key", "auth", "credential", "dsn")
"""A cell naming none of these gives no named literal: it is not searched."""
MAX_CODE_CHARS = 200_000
"""A longer cell (a pasted data file) is searched for connection strings and passwords in URLs only."""
CODE_CACHE_SIZE = 20_000
"""Cells' code remembered: as many as the kernel context reads names (``_i1`` … in order; a smaller
LRU cache missed every cell of a longer notebook, at every prompt and after every tool call)."""


@lru_cache(maxsize=CODE_CACHE_SIZE)
def code_secrets(code: str) -> tuple[str, ...]:
    """The secrets in the string literals of a cell's code, held by no variable: a connection string's
    (``create_engine("postgresql://ana:…@db")``, ``pyodbc.connect("…;PWD=…;")``), and a literal the code
    names as a credential (``psycopg2.connect(password="…")``, ``headers={"Authorization": "token …"}``,
    ``s.headers["X-Api-Key"] = "…"``, ``auth=("ana", "…")``), by the rules variables' names follow.
    Only literals: the code itself is no connection string (``pwd = os.getcwd()`` named
    ``os.getcwd()`` a password, hidden from every text). Cached: each cell's code is read at every
    prompt (IPython keeps them all in ``_i1``, ``_i2`` …)."""
    low = code.lower()
    found: list[str] = []
    queries = "://" in code and "?" in code and len(code) <= MAX_CODE_CHARS
    literals: list[str] | None = None  # tokenized once, where a rule below needs them
    if "@" in code or queries or any(key in low for key in CONNECTION_KEYS):
        literals = _literals(code)
        found += [secret for literal in literals for secret in embedded_secrets(literal)]
    named = len(code) <= MAX_CODE_CHARS and any(word in low for word in _NAME_WORDS)
    if named:
        found += _named_literals(code)
    # ``!curl -u ana:…``, ``run("… --password=…")``, ``!mysql -p…``, ``!PGPASSWORD=… psql`` (cached: once a cell)
    marked = command_marked(code, low)
    if len(code) <= MAX_CODE_CHARS and (marked or (named and (
            "pass " in low or "password " in low or _INLINE_SETTING.search(code) is not None))):  # … or a netrc entry
        found += [secret for literal in (_literals(code) if literals is None else literals)
                  for secret in flag_secrets(unescaped(literal))]
        found += [secret for line in shell_lines(code) for secret in flag_secrets(line)]  # a saved ``!mysql -p…``
    if len(code) <= MAX_CODE_CHARS and "[" in code:  # ``subprocess.run(["sshpass", "-p", "…", "ssh", host])``
        found += listed_argv_secrets(code, marked or named)
    return tuple(dict.fromkeys(found))


def _named_literals(code: str) -> list[str]:
    found: list[str] = []
    for match in (*_NAMED_LITERAL.finditer(code), *_KEYED_PAIR.finditer(code)):
        name, value = match.group("key") or match.group("name"), match.group("value")
        if "{" in value and "f" in match.group("prefix").lower():  # a template, not the secret
            continue
        if match.re is _NAMED_LITERAL and match.group("name") and "=>" in code[match.end("name"):match.start("prefix")] and \
                code[match.start("name") - 1:match.start("name")] != ":":
            continue  # JavaScript's arrow, ``secret => 'x'``, returns a text: only Ruby's ``:password =>`` names one
        if match.re is _KEYED_PAIR and (value.lower() == name.lower() or placeholder(value)):
            continue  # a field's label (``choices = [("password", "Password")]``), not its value
        if _AUTHORIZATION.fullmatch(name.translate(_SEPARATORS)):
            found.extend(s for s in (_authorization_secret(value),) if s)
        elif named_secret(name, value):
            found.append(value)
    for match in _NAMED_PAIR.finditer(code):
        password = _pair_secret(match.group("name"), ("user", match.group("value")))
        if password:
            found.append(password)
    return found


def _literals(code: str) -> list[str]:
    """The contents of ``code``'s string literals, as Python's tokenizer finds them (comments and
    triple quotes understood); for code it cannot read (a cell cut short), every one-line literal."""
    try:
        strings = [t.string for t in tokenize.generate_tokens(io.StringIO(code).readline) if t.type == tokenize.STRING]
    except (tokenize.TokenError, SyntaxError, ValueError):
        return [match.group(2) for match in _LITERAL.finditer(code)]
    contents = []
    for text in strings:
        opening = _STRING_PREFIX.match(text)
        if opening is not None:
            contents.append(text[opening.end():len(text) - len(opening.group(1))])
    return contents


_AUTH_SCHEME = re.compile(r"[A-Za-z][\w.-]*")


def _authorization_secret(value: str) -> str | None:
    """The credentials of an ``Authorization`` header's value (``token ghp_…``, ``Basic …``, a scheme
    of any name): the header exists to carry them, whatever their shape. The whole value when it
    names no scheme."""
    if len(value) > MAX_CHARS:
        return None
    scheme, space, rest = value.strip().partition(" ")  # split, not a regex: any run of spaces is linear
    secret = rest.strip() if space and rest.strip() and _AUTH_SCHEME.fullmatch(scheme) else value.strip()
    return secret if MIN_CHARS <= len(secret) <= MAX_CHARS else None


def _bytes_secrets(name: str, value: bytes | bytearray) -> tuple[str, ...]:
    """The texts a bytes value named as a credential shows (``SECRET_KEY = Fernet.generate_key()``,
    ``private_key = Path("key.pem").read_bytes()``, ``db_password = b"…"``): what its ``repr`` writes
    between the quotes (a description's, a print's), and its text decoded where it is text. Under a
    token's name, random bytes (``secrets.token_bytes(32)``: not text) count as generated."""
    key = name.translate(_SEPARATORS)
    named = _PASSWORD_NAME.fullmatch(key) is not None or _TOKEN_NAME.fullmatch(key) is not None
    if not named or not MIN_CHARS <= len(value) <= MAX_CHARS:
        return ()
    shown = repr(bytes(value))[2:-1]
    try:
        text: str | None = bytes(value).decode("utf-8")
    except UnicodeDecodeError:
        text = None
    if text is not None and not named_secret(name, text):
        return ()
    return tuple(dict.fromkeys(form for form in (shown, text) if form is not None and len(form) >= MIN_CHARS))


def _pair_secret(name: object, pair: tuple[object, ...]) -> str | None:
    """The password of ``auth = ("ana", "…")``: a (user, password) pair, as requests, httpx and
    aiohttp take basic auth, under a credential's name (``auth``, ``credentials``, ``db_password``)."""
    if len(pair) != 2 or type(name) is not str:
        return None
    name = name.translate(_SEPARATORS)
    if not (_PASSWORD_NAME.fullmatch(name) or _TOKEN_NAME.fullmatch(name)):
        return None
    user, password = pair
    if type(user) is not str or type(password) not in (str, bytes):
        return None
    if type(password) is bytes:  # requests takes ("ana", b"…") too
        return next(iter(_bytes_secrets("password", password)), None)
    return cast(str, password) if named_secret("password", cast(str, password)) else None


def _named_list(value: list[object] | tuple[object, ...], budget: list[int],
                top: bool) -> tuple[list[str], list[tuple[object, object]]] | None:
    """What a list gives by the names it holds beside values: a command line's flags' secrets, or
    its (name, value) pairs (within ``budget``, which they use up); None for any other list. A
    variable's own list (``top``) is always read as a command line; nested ones within the budget."""
    argv = argv_secrets(value) if top or budget[1] > 0 else []
    budget[1] -= 0 if top else 1
    if argv:
        return argv, []
    pairs = key_value_pairs(value, budget[0]) if budget[0] > 0 else []
    budget[0] -= len(pairs)
    return ([], pairs) if pairs else None


MAX_HELD_ITEMS = 200
"""Items of a collection of credentials (``passwords = [...]``, ``API_KEYS = {"openai": …}``) looked at."""
_COLLECTIONS = (list, tuple, set, frozenset)


def _held_name(name: object) -> str | None:
    """The credential name a collection's items are held under (``db_passwords``, ``API_KEYS``,
    ``tokens``: a plural names what each item is), as the rule for one item takes it; None when
    ``name`` names no credential."""
    if type(name) is not str:
        return None
    key = name.translate(_SEPARATORS)
    for candidate in (key, key[:-1] if key[-1:] in ("s", "S") else ""):
        # ``keys``, ``primary_keys``, ``cache_keys`` hold ids (uuids, digests) that look generated;
        # ``azure_keys``, ``openai_keys`` hold a vendor's keys (review of session 57).
        if candidate and (_PASSWORD_NAME.fullmatch(candidate) or _TOKEN_NAME.fullmatch(candidate)) \
                and not _ID_KEY.fullmatch(candidate):
            return candidate
    return None


_ID_KEY = re.compile(r"(?i)(?:.*_)?(?:PRIMARY|FOREIGN|CACHE|JOIN|SORT|PARTITION|ROW|LOOKUP|GROUP|INDEX|HASH"
                     r"|DEDUP|UNIQUE|COMPOSITE|SURROGATE|NATURAL|OBJECT|S3|BUCKET|DICT|MAP|RANDOM|SEED)_KEY|KEY")
"""A collection's name for keys that are ids: a bare ``keys``, a table's or a cache's."""


def _names_credential(key: object) -> bool:
    if type(key) is not str:
        return False
    name = key.translate(_SEPARATORS)
    return bool(_PASSWORD_NAME.fullmatch(name) or _TOKEN_NAME.fullmatch(name) or _AUTHORIZATION.fullmatch(name))


def held_secrets(name: object, value: object) -> tuple[str, ...]:
    """The secrets a collection named as credentials holds as its own items, by the rule its name
    gives one of them: ``db_passwords = {"prod": "…", "dev": "…"}``, ``API_KEYS = {"openai": "sk-…",
    "cohere": "…"}``, ``passwords = ["…", "…"]``. Their keys (``prod``, ``cohere``) name no credential,
    so the walk below found nothing in them, and their values went to the model. A mapping one of
    whose keys names a credential is a record (``{"user": "ana", "password": "…"}``), its keys speaking
    for its values: its other values (the user's name) are not taken for secrets."""
    held = _held_name(name)
    kind = type(value)
    if held is None or not (kind in _MAPPINGS or kind in _COLLECTIONS):
        return ()
    if kind in _MAPPINGS:
        items = list(islice(cast("dict[object, object]", value).items(), MAX_HELD_ITEMS))
        if any(_names_credential(key) for key, _ in items):
            return ()
        values: list[object] = [v for _, v in items]
    else:
        values = list(islice(cast("Iterable[object]", value), MAX_HELD_ITEMS))
    found: list[str] = []
    for item in values:
        if type(item) is str and named_secret(held, item):
            found.append(item)
        elif type(item) in (bytes, bytearray):
            found.extend(_bytes_secrets(held, cast(bytes, item)))
    return tuple(found)


def _text_secrets(name: object, value: str, depth: int) -> Iterable[str]:
    """The secrets one text of the walk gives, by its name or by what it holds."""
    if type(name) is str and _AUTHORIZATION.fullmatch(name.translate(_SEPARATORS)):
        return [s for s in (_authorization_secret(value),) if s]
    if type(name) is str and named_secret(name, value):
        return [value]
    if type(name) is str and depth == 0 and _CELL_CODE.fullmatch(name):
        return code_secrets(value)
    if "\n" in value and len(value) <= MAX_TEXT_LINES_CHARS:  # a file's text: a .env's lines
        return [*embedded_secrets(value), *assigned_secrets(value)]
    if depth == 0 and len(value) <= MAX_TEXT_LINES_CHARS:  # a command line: ``mysql --password=…``
        return [*embedded_secrets(value), *flag_secrets(value)]
    return embedded_secrets(value)


def credential_variable_values(variables: Iterable[tuple[object, object]]) -> tuple[str, ...]:
    """The string values of ``variables`` (a kernel's names and values) named as credentials, and
    of the plain mappings, ``SimpleNamespace`` objects and dataclass instances among them, down to
    :data:`MAX_DEPTH` levels (``config["db"]["password"]``, ``dotenv_values()``'s ``OrderedDict``,
    ``cfg.db.password``): secrets for the model as the environment's are.

    A name of a password or secret (``db_password``, ``SECRET_KEY``) is enough; a name of a token
    or key (``api_key``, ``hf_token``, ``slack_webhook_url``) needs a value shaped like a generated
    one (or a URL with credentials in it), and a (user, password) pair under either gives its
    password; any other URL or connection string gives its password (:func:`embedded_secrets`).
    A collection so named (``db_passwords = {"prod": …}``, ``API_KEYS = {"openai": …}``, ``passwords =
    [...]``) gives its items by the rule of its name (:func:`held_secrets`).
    A text holding a record (``json.dumps(cfg)``, a form body ``user=ana&password=…``) is parsed and
    read by the same rule, within its own bounds (:mod:`.text_records`).
    Paths are never taken. Objects are looked at by their exact type only (``type(value)``):
    reading ``__class__`` runs code in lazy proxies (Django's ``settings``), and no user code runs
    here."""
    return _walk_values(variables, TextScans(lambda items: _walk_values(items, None)))


def _with_entry(items: list[tuple[object, object]]) -> list[tuple[object, object]]:
    """A mapping's items, and the (name, value) its ``name``/``value`` items give (``{"name": "DB_PASSWORD", "value": …}``)."""
    return items + named_entry(items) if len(items) <= MAX_ENTRY_ITEMS else items


def _walk_values(variables: Iterable[tuple[object, object]], texts: TextScans | None) -> tuple[str, ...]:
    """:func:`credential_variable_values`, reading record-shaped texts with ``texts`` (None: a parsed
    record's own texts are not parsed again)."""
    found: list[str] = []
    mappings, rows = [0], [MAX_ROWS]
    frame_budget = list(FRAME_BUDGETS)
    held = [MAX_MAPPINGS]  # collections of credentials read in one namespace
    pair_budget = [MAX_PAIRS, MAX_ARGV_LISTS]  # (name, value) pairs and command lines of lists read in one namespace

    def walk(items: Iterable[tuple[object, object]], depth: int) -> None:
        for name, value in items:
            if depth == 0 and texts is not None:
                texts.next_variable()
            kind = type(value)
            if kind is not str and held[0] > 0 and (kind in _MAPPINGS or kind in _COLLECTIONS) \
                    and _held_name(name) is not None:
                held[0] -= 1  # a collection of credentials: its own items, besides what the walk finds in it
                found.extend(held_secrets(name, value))
            if kind is str:
                text = cast(str, value)
                found.extend(_text_secrets(name, text, depth))
                if texts is not None and (text[:1] in RECORD_FIRSTS or "&" in text):  # may be a record: cheap
                    found.extend(texts.secrets(name, text, depth == 0))
            elif kind in (bytes, bytearray) and type(name) is str:
                found.extend(_bytes_secrets(name, value))  # type: ignore[arg-type]
            elif kind is tuple and (password := _pair_secret(name, value)):  # type: ignore[arg-type]
                found.append(password)
            elif depth < MAX_DEPTH and mappings[0] < MAX_MAPPINGS and (fields := _fields(value, kind)) is not None:
                mappings[0] += 1
                walk(_with_entry(list(islice(fields, MAX_ITEMS_PER_MAPPING))), depth + 1)
            elif (depth < MAX_DEPTH and mappings[0] < MAX_MAPPINGS
                  and (columns := frame_columns(value, kind, frame_budget)) is not None):
                mappings[0] += 1  # a frame counts as a mapping: 10,000 frames are not all read at each prompt
                walk(columns, depth + 1)
            elif (kind in (list, tuple) and depth < MAX_DEPTH
                  and (named := _named_list(value, pair_budget, not depth)) is not None):  # type: ignore[arg-type]
                found.extend(named[0])  # a command line's flags (``["mysql", "--password", …]``)
                walk(named[1], depth + 1)  # (name, value) pairs: a mapping written as a list (``cp.items("db")``)
            elif kind in (list, tuple) and depth < MAX_DEPTH and rows[0] > 0:
                # A list of mappings (``connections = [{"name": …, "password": …}]``, a JSON file's
                # records): its first rows' items, as if they stood one level down. Rows have their own
                # bound: lists (a frame's columns, records) never use up what the mappings get.
                for row in islice(value, MAX_ROWS_PER_LIST):  # type: ignore[call-overload]
                    if type(row) in _MAPPINGS and rows[0] > 0:
                        rows[0] -= 1
                        walk(_with_entry(list(islice(row.items(), MAX_ITEMS_PER_MAPPING))), depth + 1)

    walk(variables, 0)
    return tuple(dict.fromkeys(found))  # each once (_i, _ii and _i12 hold the same code)


__all__ = ["CODE_CACHE_SIZE", "MAX_DEPTH", "MAX_ITEMS_PER_MAPPING", "MAX_ROWS", "MAX_ROWS_PER_LIST", "code_secrets",
           "credential_variable_values", "held_secrets"]
