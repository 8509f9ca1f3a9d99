"""What a notebook's variables hold that is a secret (``db_password = "…"``, ``dotenv_values()``),
and what is not (``eos_token = "<|endoftext|>"``, ``pat = r"…"``, ``token_dir = "/home/…"``)."""

from __future__ import annotations

import time
from collections import OrderedDict, defaultdict
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import pytest

from nbagent import Agent
from nbagent.engine.credentials.embedded_secrets import MAX_CONNECTION_CHARS, connection_secrets, looks_like_token, url_password
from nbagent.engine.credentials.kernel_secrets import MAX_ITEMS_PER_MAPPING, code_secrets, credential_variable_values
from nbagent.engine.loop.facts import VariableInfo
from nbagent.providers.anthropic import simulated_provider
from nbagent.providers.simulated import SimulatedAPI
from tests.engine.loop.test_query_support import done_of

API_KEY = "sk-proj-4fT9xQ2mLp8ZrW1vNc7YhK3s"
HF_TOKEN = "hf_aZ3kQ9xLm2PqR7sT4vW8yB1nC6dE"


class LazySettings:
    """Django's ``settings`` before it is configured: reading ``__class__`` raises."""

    @property  # type: ignore[misc]
    def __class__(self) -> Any:  # noqa: D105
        raise RuntimeError("settings are not configured")


def test_passwords_by_name_and_tokens_by_name_and_shape() -> None:
    namespace = {"db_password": "hunter2-hunter2", "wifi_passphrase": "correct horse battery staple",
                 "api_key": API_KEY, "HF_TOKEN": HF_TOKEN, "_secret": "s3cr3t-value",
                 "short_password": "abc", "token_dir": "/home/alice/tokens", "password_file": "~/.pgpass",
                 "eos_token": "<|endoftext|>", "token": "tokenization", "pat": r"[A-Za-z]+\d{16,}abcdefgh",
                 "api_key_name": "OPENAI_API_KEY", "model": "claude-sonnet-4-5-20250929", 7: "not-a-name-1",
                 "database_dsn": "postgres://app:pw-9xQ@db.internal/sales"}
    assert credential_variable_values(namespace.items()) == (
        "hunter2-hunter2", "correct horse battery staple", API_KEY, HF_TOKEN, "s3cr3t-value",
        "postgres://app:pw-9xQ@db.internal/sales")


def test_short_password_names_and_a_bare_key_name_are_credentials_too() -> None:
    """``DB_PASS``, ``mysql_pwd`` and ``openai_key`` named no credential: their values went to the
    model (attacker pass 11); ``pass_rate``, ``PWD`` (the working folder) and a ``sort_key`` stay."""
    namespace = {"DB_PASS": "hunter2-hunter2", "mysql_pwd": "Mysql-Pw-2024", "openai_key": API_KEY,
                 "pass_rate": "ninety-three", "PWD": "/home/ana/project", "sort_key": "order_date",
                 "key": "region_and_month", "compass": "north-north-east"}
    assert credential_variable_values(namespace.items()) == ("hunter2-hunter2", "Mysql-Pw-2024", API_KEY)


def test_mappings_are_walked_four_levels_down_each_within_its_own_bound() -> None:
    vocabulary = {f"w{i}": f"word{i}" for i in range(30_000)}  # a big dict first uses up nothing of the rest
    env = OrderedDict(OPENAI_API_KEY=API_KEY, DB_PASSWORD="pg-pass-1234")  # what dotenv_values() returns
    nested = {"db": {"password": "in-a-dict-99"}, "deeper": {"x": {"secret": "three-levels-down"}},
              "deepest": {"a": {"b": {"c": {"secret": "five-levels-down"}}}}}
    counts: defaultdict[str, str] = defaultdict(str, {"auth_token": HF_TOKEN})
    namespace = {"vocabulary": vocabulary, "config": env, "settings": nested, "counts": counts,
                 "later_password": "after-the-big-one", "wrapped": type("Cfg", (dict,), {})(secret="subclassed-1")}
    assert credential_variable_values(namespace.items()) == (
        API_KEY, "pg-pass-1234", "in-a-dict-99", "three-levels-down", HF_TOKEN, "after-the-big-one")
    beyond = {f"k{i}": "x" for i in range(MAX_ITEMS_PER_MAPPING)} | {"password": "past-the-bound"}
    assert credential_variable_values([("big", beyond)]) == ()


def test_the_password_of_a_url_is_a_secret_whatever_its_variable_is_called() -> None:
    """``DATABASE_URL``, ``MONGO_URI``, ``redis_url`` name no credential: the URL, password and all,
    went to the model in the variables and the cell that typed it (attacker pass 11)."""
    namespace = {"DATABASE_URL": "postgresql://analyst:Tr0ub4dor-x9@db.internal:5432/sales",
                 "conf": {"broker": "amqp://etl:p%40ss-w0rd-99@mq/vhost"}, "redis_url": "redis://:pw@cache:6379/0",
                 "site": "https://example.com/a@b", "user_only": "ftp://anonymous@ftp.example.org/",
                 "bad": "http://[::1:80@x", "text": "see postgres://u:longpassword@h in the logs"}
    assert credential_variable_values(namespace.items()) == ("Tr0ub4dor-x9", "p@ss-w0rd-99", "s://:pw@")
    assert url_password("mongodb+srv://etl:kP3wq9ZzA1@cluster0.example.net/prod") == "kP3wq9ZzA1"


def test_a_jdbc_urls_password_and_a_short_one_are_secrets_the_sanitizer_keeps() -> None:
    """A JDBC URL (``jdbc:postgresql://…?user=ana&password=…``) and a password in a URL's query were
    not looked for; a short one (``:pw12@``, ``Pwd=pw``) was found but shorter than the 8
    characters the sanitizer keeps, so it went to the model whole (review of this session)."""
    from nbagent.engine.loop.sanitize import REDACTED, Sanitizer, secret_values

    namespace = {"jdbc": "jdbc:postgresql://db:5432/sales?user=ana&password=Jdbc-Pass-42&ssl=true",
                 "query": "mysql://db/sales?pwd=qs-pass-777", "redis": "redis://:pw12@cache:6379/0",
                 "odbc": "Server=db;Pwd=pw;", "azure": "AccountName=a;AccountKey=/aBcD9xYz+QkLmNo==;"}
    found = credential_variable_values(namespace.items())
    assert found == ("Jdbc-Pass-42", "qs-pass-777", "//:pw12@", "b;Pwd=pw", "/aBcD9xYz+QkLmNo==")
    clean = Sanitizer(secret_values((), found))
    for value in namespace.values():
        shown = clean.redact(f"conn = {value!r}")
        assert REDACTED in shown and not any(p in shown for p in ("Jdbc-Pass", "qs-pass", "pw12", "Pwd=pw", "aBcD9"))


def test_a_connection_string_s_password_or_key_is_a_secret_whatever_its_variable_is_called() -> None:
    """pyodbc's ``…;UID=ana;PWD=…;``, libpq's ``host=db password=…``, an Azure storage string's
    ``AccountKey=…``: ``conn_str`` names no credential, and the string went whole to the model."""
    account_key = "Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MGFiY2RlZmdoaWprbA=="
    namespace = {"conn_str": "DRIVER={ODBC Driver 18};SERVER=db;UID=ana;PWD={Tr0ub;4dor&3x};",
                 "dsn": "host=db user=ana password='Tr0ub4dor kw' dbname=sales",
                 "blob": f"DefaultEndpointsProtocol=https;AccountName=a;AccountKey={account_key};EndpointSuffix=x",
                 "env_dump": "HOME=/home/ana PWD=/home/ana/project", "short": "Server=db;Pwd=pw;"}
    assert credential_variable_values(namespace.items()) == (
        "Tr0ub;4dor&3x", "Tr0ub4dor kw", account_key, "b;Pwd=pw")
    assert connection_secrets("a plain sentence = nothing secret") == ()


def test_a_connection_string_is_looked_for_within_bounds() -> None:
    """Every string of a namespace is looked at: a regex over 25,000 strings of code holding ``=`` took
    ~5 s at each prompt. Keys are found in C, a long string (code, a document) is no connection
    string, and a string naming a key on every line is looked at for its first few only."""
    assert connection_secrets("Server=db;" + "x" * MAX_CONNECTION_CHARS + ";PWD=Tr0ub4dor&3x;") == ()
    assert connection_secrets("cd $PWD\n" * 20 + "PWD=Tr0ub4dor&3x") == ()
    assert connection_secrets("Server=db;Password=Tr0ub4dor&3x;AccountKey=Zm9vYmFyYmF6cXV4;") == (
        "Tr0ub4dor&3x", "Zm9vYmFyYmF6cXV4")


def test_a_user_and_password_pair_under_a_credential_name_gives_its_password() -> None:
    """``auth = ("analyst", "…")``, as requests takes basic auth: the tuple was never looked into, and
    its description sent the password to the model (attacker pass 11)."""
    namespace = {"auth": ("analyst", "hunter2hunter2"), "BASIC_AUTH": ("admin", "S3cret-admin-pw"),
                 "cfg": {"credentials": ("bob", "bobs-password-1")}, "point": ("x", "yyyyyyyyyy"),
                 "auth_dir": ("a", "/home/ana/auth"), "auth_size": (640, 480)}
    assert credential_variable_values(namespace.items()) == ("hunter2hunter2", "S3cret-admin-pw", "bobs-password-1")


def test_a_password_that_starts_with_a_tilde_is_no_path() -> None:
    """Any value starting with ``~`` was read as a path (``~/.pgpass``), so a generated password such as
    ``~Xk9$pq2!zzQ`` went to the model (attacker pass 11); ``~/…`` and ``~ana/…`` are still paths."""
    namespace = {"db_password": "~Xk9$pq2!zzQ", "password_file": "~/.pgpass", "other_password": "~ana/pw.txt",
                 "word_password": "~Summer2024", "home_password": "~", "conn_str": "UID=ana;PWD=~Winter2024;"}
    assert credential_variable_values(namespace.items()) == ("~Xk9$pq2!zzQ", "~Summer2024", "~Winter2024")


def test_a_cells_code_gives_the_secrets_of_its_string_literals_only() -> None:
    """IPython keeps each cell's code in ``_i``, ``_ii``, ``_i12``: read as connection strings,
    ``pwd = os.getcwd()`` made ``os.getcwd()`` a secret, hidden from every text the model read (the
    user's own question included), and ``password = getpass.getpass()`` hid the code that keeps a
    password out of the notebook (review of this session). A URL or connection string typed in a
    call, held by no variable, still gives its password."""
    safe = ("import os, getpass  # don't type the 'password' here\npwd = os.getcwd()\npassword = password_for('db')\n"
            "conn = connect(host='db', user='ana', password=os.environ['PGPASSWORD'])\n"
            "password = getpass.getpass()\nreply = input(\"Password: \")\npwd = Path.cwd()")
    typed = ('engine = create_engine("postgresql://ana:Secr3t-Pass@db/sales")\n'
             "odbc = pyodbc.connect('DRIVER={ODBC 18};UID=ana;PWD=Odbc-Pass-9;')\n")
    cut = "conn = connect('host=db password=Cut-Pass-77')\nnote = " + "'" * 3 + "unterminated"  # no tokenizer reads it
    namespace = {"_i3": safe, "_i": typed, "_ii": safe, "_i4": typed, "_i5": cut}
    assert credential_variable_values(namespace.items()) == ("Secr3t-Pass", "Odbc-Pass-9", "Cut-Pass-77")  # each once


def test_a_lazy_proxy_is_not_touched() -> None:
    assert credential_variable_values([("settings", LazySettings()), ("db_password", "hunter2-hunter2")]) == (
        "hunter2-hunter2",)


def test_a_generated_token_is_told_from_names_paths_and_versions() -> None:
    assert looks_like_token(API_KEY) and looks_like_token(HF_TOKEN)
    assert not any(map(looks_like_token, ["claude-sonnet-4-5-20250929", "/home/alice/data", "tokenization_v2",
                                          "2024-01-01T00:00:00", "ENDOFTEXT"]))


async def test_kernel_facts_whose_secrets_cannot_be_read_fail_no_prompt_and_leave_no_run_marked() -> None:
    """A namespace read that raises (a thread changing it, an object it cannot look at) left the
    Agent marked as running: every later prompt failed "a run is already in progress"."""

    class Facts:
        def __call__(self) -> tuple[list[VariableInfo], list[str]]:
            return [], []

        def secrets(self) -> tuple[str, ...]:
            raise RuntimeError("dictionary changed size during iteration")

    agent = Agent(provider=simulated_provider(SimulatedAPI()), kernel_facts=Facts(), read_mcp_json=False)
    for prompt in ("what is 2 + 2?", "and 3 + 3?"):
        assert done_of([e async for e in agent.run(prompt)]).reason == "end_turn"


@dataclass
class _Database:
    host: str
    password: str


@dataclass
class _Settings:
    db: _Database
    api_key: str


@dataclass(slots=True)
class _Slotted:
    password: str


class _DictProperty:
    """A class whose ``__dict__`` is its own code: reading it is not done."""

    def __init__(self) -> None:
        self.password = "never-read-1"

    @property  # type: ignore[misc]
    def __dict__(self) -> Any:  # type: ignore[override]  # noqa: D105
        raise RuntimeError("user code ran")


def test_the_attributes_of_a_namespace_or_a_dataclass_are_walked_without_running_their_code() -> None:
    # `cfg = SimpleNamespace(**yaml.safe_load(...))`, a settings dataclass: `cfg.db.password` was never
    # known, so a tool's print of it went to the model whole.
    namespace = {"cfg": SimpleNamespace(db=SimpleNamespace(password="ns-pass-1234")),
                 "settings": _Settings(_Database("db.local", "dc-pass-5678"), API_KEY),
                 "slotted": _Slotted("slots-pass-90"), "odd": _DictProperty()}
    assert credential_variable_values(namespace.items()) == ("ns-pass-1234", "dc-pass-5678", API_KEY)


def test_a_headers_dict_gives_its_api_key_and_its_authorization_credentials() -> None:
    """``headers = {"X-Api-Key": …}`` (words split by ``-``, as HTTP writes them) and an ``Authorization``
    header's credentials (``token ghp_…``, ``Basic …``: no shape the sanitizer knows) named no
    credential: the dict's description sent the token to the model (attacker pass 13)."""
    github = "ghp_Zk3LqW9xT2mP7rV4bN8cY1hJ6dF0sA5gE"
    namespace = {"headers": {"X-Api-Key": HF_TOKEN[3:], "Accept": "application/vnd.github+json"},
                 "gh": {"Authorization": f"token {github}"}, "basic": {"Proxy-Authorization": "Basic YW5hOnB3LTEyMzQ1"},
                 "azure": {"api-key": API_KEY}, "sheet": {"DB Password": "sheet-pass-77"},
                 "short": {"Authorization": "token abc"}, "sort": {"sort-key": "order_date"}}
    assert credential_variable_values(namespace.items()) == (
        HF_TOKEN[3:], github, "YW5hOnB3LTEyMzQ1", API_KEY, "sheet-pass-77")


def test_a_list_of_mappings_gives_the_secrets_of_each_mapping() -> None:
    """``connections = [{"name": "prod", "password": …}]`` (a JSON file's records) was not looked into:
    only mappings were walked, and the list's description sent each password to the model."""
    namespace = {"connections": [{"name": "prod", "password": "prod-pass-123"}, "not a mapping",
                                 {"name": "dev", "password": "dev-pass-4567"}],
                 "pairs": ({"token": HF_TOKEN},), "numbers": list(range(5_000))}
    assert credential_variable_values(namespace.items()) == ("prod-pass-123", "dev-pass-4567", HF_TOKEN)


def test_a_urls_query_token_is_a_secret_whatever_its_variable_is_called() -> None:
    """``?api_key=…``, Google's ``&key=AIza…``, ``access_token=…`` and an Azure SAS's ``sig=…`` named no
    credential: only a query's ``password``/``pwd`` was read, so a ``url`` variable, an environment's
    ``FEED_URL`` and a ``requests.get("…?access_token=…")`` cell sent the token to the model (attacker pass 13)."""
    from nbagent.engine.loop.sanitize import REDACTED, Sanitizer, secret_values

    google = "AIzaSyD3kQ9xLm2PqR7sT4vW8yB1nC6dE0fG"
    sas = "https://acct.blob.core.windows.net/c/b.csv?sv=2022-11-02&sp=r&sig=k3LqW9xT2mP7rV4bN8cY1hJ6dF0sA5gE%3D"
    namespace = {"url": f"https://maps.googleapis.com/maps/api/geocode/json?address=Paris&key={google}",
                 "feed": "https://api.example.com/v1/items?api_key=Zk3LqW9xT2mP7rV4bN8c&page=2", "blob": sas,
                 "_i3": 'r = requests.get("https://api.example.com/v2?access_token=Qw8eRt5yUi2oPa9sDf4g")',
                 "search": "https://example.com/search?q=hello+world&sort_key=order_date&page_token=abc123&page=2"}
    found = credential_variable_values(namespace.items())
    assert found == (google, "Zk3LqW9xT2mP7rV4bN8c", "k3LqW9xT2mP7rV4bN8cY1hJ6dF0sA5gE=", "Qw8eRt5yUi2oPa9sDf4g")
    shown = Sanitizer(secret_values((), found)).redact(repr(namespace))
    assert shown.count(REDACTED) == 4 and "k3LqW9" not in shown and "order_date" in shown


def test_bytes_named_as_credentials_are_secrets_as_their_repr_and_their_text_show_them() -> None:
    """``db_password = b"…"``, ``SECRET_KEY = secrets.token_bytes(24)``, ``private_key = Path(…).read_bytes()``
    and ``auth = ("ana", b"…")`` were not looked at (strings only): their descriptions (``b'…'``) sent
    them to the model (attacker pass 13)."""
    from nbagent.engine.loop.sanitize import REDACTED, Sanitizer, secret_values

    binary = bytes(range(200, 224))
    pem = b"-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----\n"
    namespace = {"db_password": b"Bytes-Pa55word!x", "SECRET_KEY": binary, "private_key": pem,
                 "fernet_key": bytearray(b"Zk3LqW9xT2mP7rV4bN8cY1hJ6dF0sA5gE="), "auth": ("ana", b"Bytes-Pair-Pw-99"),
                 "cfg": {"password": b"Dict-Bytes-Pw-77"}, "token_counts": b"aaaaaaaaaaaa", "raw": b"not-a-secret-1"}
    found = credential_variable_values(namespace.items())
    shown = Sanitizer(secret_values((), found)).redact(repr(namespace) + pem.decode())
    assert shown.count(REDACTED) == 7, shown
    for leaked in ("Pa55word", repr(binary)[2:20], "MIIEvQ", "Zk3LqW9", "Pair-Pw", "Bytes-Pw"):
        assert leaked not in shown
    assert "aaaaaaaaaaaa" in shown and "not-a-secret-1" in shown


def test_pw_and_pwd_hold_a_password_unless_they_hold_a_path() -> None:
    """``pw = getpass.getpass()`` (and ``db_pw``, ``pwd``) named no credential: the password typed at the
    prompt was described to the model (attacker pass 13). ``pwd = os.getcwd()`` is a path, on Windows too."""
    namespace = {"pw": "Hunter2-Hunter2", "db_pw": "Pg-Pw-123456", "pwd": "Getpass-Pw-77", "PWD": "/home/ana/project",
                 "cwd_pwd": "C:\\Users\\ana\\project", "power": "abcdefghijk", "pw_rank": "abcdefghijk"}
    assert credential_variable_values(namespace.items()) == ("Hunter2-Hunter2", "Pg-Pw-123456", "Getpass-Pw-77")


def test_a_literal_a_cells_code_names_as_a_credential_is_a_secret() -> None:
    """``psycopg2.connect(password="…")``, ``headers={"Authorization": "token ghp_…"}``,
    ``s.headers["X-Api-Key"] = "…"`` and ``s.auth = ("ana", "…")`` leave no variable holding the
    secret, and only connection strings were looked for in a cell's literals: the cell's text went
    to the model whole in the recent cells (attacker pass 13). Names follow the variables' rules."""
    code = "\n".join([
        'conn = psycopg2.connect(host="db", user="ana", password="S3cret-Pg-pw!")',
        'r = requests.get(url, headers={"Authorization": "token ghp_Zk3LqW9xT2mP7rV4bN8cY1hJ6dF0sA5gE"})',
        's.auth = ("ana", "Basic-Auth-Pw-9")',
        f's.headers["X-Api-Key"] = "{HF_TOKEN[3:]}"',
        'df.sort_values(key="order_date"); eos_token = "<|endoftext|>"; token_dir = "/home/ana/tokens"',
        'if password == "compared-not-set": pass',
    ])
    assert credential_variable_values([("_i7", code)]) == (
        "S3cret-Pg-pw!", "ghp_Zk3LqW9xT2mP7rV4bN8cY1hJ6dF0sA5gE", HF_TOKEN[3:], "Basic-Auth-Pw-9")


def test_lists_of_records_or_columns_leave_a_configs_password_a_secret() -> None:
    # Each list (and each of its rows) used up the budget the mappings have: a JSON file's records, a
    # dict of column lists or 500 small lists before `cfg` left its password unknown (the review).
    cfg = {"db": {"password": "hunter2-Summer!"}}
    for before in ([("records", [{"id": i, "city": "Oslo"} for i in range(1000)])],
                   [("columns", {f"c{i}": [1, 2, 3] for i in range(600)})],
                   [(f"xs{i}", [1, 2]) for i in range(500)]):
        assert credential_variable_values([*before, ("cfg", cfg)]) == ("hunter2-Summer!",)


def test_whitespace_runs_are_read_in_linear_time() -> None:
    # `{'key'` then 150,000 spaces took 229 s (two `\s*` around an optional `]`); an Authorization
    # value's spaces were retried by a lazy group. A bound far above the linear time (~0.05 s).
    started = time.process_time()
    code_secrets("x = {'key'" + " " * 150_000 + "}")
    credential_variable_values([("headers", {"Authorization": "Basic x" + " " * 4_000 + "y"})])
    assert time.process_time() - started < 5
    assert code_secrets('headers["X-Api-Key"] = "Zk3LqW9xT2mP7rV4bN8cY1hJ6"') == ("Zk3LqW9xT2mP7rV4bN8cY1hJ6",)
    assert code_secrets('{"password" : "S3cret-Pg-pw!"}') == ("S3cret-Pg-pw!",)


def test_every_cell_a_namespace_holds_is_read_once() -> None:
    # A cache of 4,096 cells, read in order at every prompt and after every tool call, missed every
    # cell of a longer notebook: each walk tokenized them all again.
    cells = [(f"_i{n}", f"conn = connect(key=value_{n}, password=secret)  # cell {n}") for n in range(5_000)]
    credential_variable_values(cells)
    before = code_secrets.cache_info().hits
    credential_variable_values(cells)
    assert code_secrets.cache_info().hits - before == len(cells)


def test_a_power_column_a_label_or_a_folder_under_a_short_password_name_is_no_secret() -> None:
    # `pw` and `pwd` hold passwords (`pw = getpass()`), and plain words or a relative path under them
    # are a column (`{"pw": "power_watts"}`), a label or a folder: redacted, they were hidden from the
    # model in every output for the rest of the session (the review).
    assert code_secrets('df = df.rename(columns={"pw": "power_watts", "pass": "passenger"})') == ()
    assert code_secrets('label = {"pw": "Power (W)"}') == code_secrets('first_pass = "tokenize the text"') == ()
    assert code_secrets('pwd = "data/raw/2024"') == code_secrets('pw = "C:/Users/ana/data"') == ()
    assert credential_variable_values([("pw", "pairwise"), ("x", {"pw": "picowatt"}), ("pw", "Hunter2-Hunter2"),
                                       ("db_pass", "Summer2024!"), ("password", "correct horse")]) == (
        "Hunter2-Hunter2", "Summer2024!", "correct horse")


class _Noisy(type):
    """A metaclass whose attribute reads are recorded: describing a variable must run none."""

    read: list[str] = []

    def __getattribute__(cls, name: str) -> Any:
        _Noisy.read.append(name)
        return type.__getattribute__(cls, name)


def test_a_metaclass_runs_no_code_when_variables_are_walked() -> None:
    lazy = _Noisy("Lazy", (), {})()
    _Noisy.read.clear()
    assert credential_variable_values([("settings", lazy), ("db_password", "hunter2-hunter2")]) == ("hunter2-hunter2",)
    assert _Noisy.read == []


def test_an_annotated_assignment_or_a_plain_f_string_names_its_literal_too() -> None:
    # `db_password: str = "…"` (a settings class's default) and `password=f"…"` were not read (the review).
    assert code_secrets('db_password: str = "Summer-2024!x"') == ("Summer-2024!x",)
    assert code_secrets('def connect(password: str = "Default-Pw-99"): ...') == ("Default-Pw-99",)
    assert code_secrets('conn = connect(password = f"Fstring-Pw-77")') == ("Fstring-Pw-77",)
    assert code_secrets('conn = connect(password=f"{user}-{suffix}")') == ()  # a template, not the secret


def test_a_cell_of_urls_past_the_code_bound_is_not_tokenized_for_their_queries(monkeypatch: pytest.MonkeyPatch) -> None:
    # Query tokens made every cell holding "://" and "?" be tokenized whole: an 8.5 MB cell of URLs took
    # 4.8 s at the first prompt after it ran (the review). Past MAX_CODE_CHARS only `@` and connection
    # keys still call for it, as before this session.
    from nbagent.engine.credentials import kernel_secrets

    tokenized: list[int] = []

    def literals(code: str) -> list[str]:
        tokenized.append(len(code))
        return []

    monkeypatch.setattr(kernel_secrets, "_literals", literals)
    urls = "\n".join(f"u{i} = 'https://example.com/data/{i}.csv?version={i}'" for i in range(5_000))
    assert len(urls) > kernel_secrets.MAX_CODE_CHARS
    small = "x = 'https://example.com/a.csv?api_key=Zk3LqW9xT2mP7rV4bN8c&n=1'"
    code_secrets(urls)
    code_secrets(small)
    assert tokenized == [len(small)]


def test_a_frames_credential_columns_give_their_values_as_the_same_records_as_a_list_do() -> None:
    """``pd.read_json("connections.json")`` (or a database's users table) sent each ``password`` and
    ``api_key`` to the model in the frame's description, where the same records as a list of
    mappings were ``[redacted]`` (pow3)."""
    import pandas as pd

    key = "q9Zk2LmX8vB3nR7tW1pY5sD4fG6hJ0aC"
    users = pd.DataFrame({"name": ["prod", "dev", "dev"], "password": ["Tr0ub4dor&3-horse", "hunter2-staple", "hunter2-staple"],
                          "api_key": [key, "not a key at all", None], "notes": ["Tr0ub4dor is a word", "x", "y"]})
    assert credential_variable_values({"users": users}.items()) == ("Tr0ub4dor&3-horse", "hunter2-staple", key)
    twice = pd.DataFrame([["pass-word-1", "pass-word-2"]], columns=["password", "password"])  # read by place
    numbers = pd.DataFrame({"token_count": [1, 2], "key_0": [0.5, 1.5]})
    assert credential_variable_values({"twice": twice, "numbers": numbers}.items()) == ("pass-word-1", "pass-word-2")
    assert credential_variable_values({"pw": users["password"], "names": users["name"]}.items()) == (
        "Tr0ub4dor&3-horse", "hunter2-staple")


def test_wide_frames_are_read_within_a_bound() -> None:
    """Checked column by column, 500 frames of 1,000 columns took 1.5 s at each prompt (pow3)."""
    import numpy as np
    import pandas as pd

    frames = {f"f{i}": pd.DataFrame(np.zeros((2, 1_000)), columns=[f"key_{j}" for j in range(1_000)]) for i in range(600)}
    # This process's CPU time, not the wall clock: ~0.14 s here, and a loaded 2-core CI worker (the other
    # worker, kernels, Chromium on the same cores) took 1.45 s of wall time to do the same work.
    started = time.process_time()
    assert credential_variable_values(frames.items()) == ()
    assert time.process_time() - started < 1.0


def test_an_odd_frame_gives_nothing_and_the_namespaces_other_secrets_stand() -> None:
    """A credential-named column of dicts (``pd.DataFrame(api_records)`` with an ``auth`` field) made
    ``unique()`` raise, which switched off every kernel secret: ``db_password`` went out in clear (review)."""
    import pandas as pd

    class Odd:
        def __eq__(self, other: object) -> bool:
            raise ValueError("no")

        __hash__ = None  # type: ignore[assignment]

    sessions = pd.DataFrame({"user": ["ana", "bo"], "auth": [{"method": "sso"}, ["x"]], "password": [Odd(), "S3cr3t-pass!"]})
    found = credential_variable_values({"db_password": "correct-horse-9", "sessions": sessions}.items())
    assert found == ("correct-horse-9", "S3cr3t-pass!")


def test_a_tables_ids_and_a_dataset_of_password_words_are_no_secrets() -> None:
    """``join_key``, ``primary_key``, ``next_page_token`` hold ids (uuids look generated), and a
    password-strength dataset's words (``football``) are words: redacted, they garbled every text
    about the table, the word "password" included (review)."""
    import uuid

    import pandas as pd

    ids = [str(uuid.UUID(int=i + 1)) for i in range(3)]
    orders = pd.DataFrame({"join_key": ids, "primary_key": ids, "next_page_token": ids, "amount": [1, 2, 3]})
    strength = pd.DataFrame({"password": ["password", "football", "kzde5577"], "strength": [0, 0, 1]})
    assert credential_variable_values({"orders": orders, "strength": strength}.items()) == ("kzde5577",)
    tokens = pd.DataFrame({"access_token": ["q9Zk2LmX8vB3nR7tW1pY5sD4fG6hJ0aC"]})
    assert credential_variable_values({"tokens": tokens}.items()) == ("q9Zk2LmX8vB3nR7tW1pY5sD4fG6hJ0aC",)


def test_a_users_table_gives_a_bounded_number_of_secrets_first_rows_first() -> None:
    """2,000 hashes were 2,000 secrets, each a form every text and delta is scanned for: one prompt
    took five times as long (review)."""
    import pandas as pd

    from nbagent.engine.credentials.frame_secrets import MAX_FRAME_VALUES

    users = pd.DataFrame({"password_hash": [f"$2b$12$h{i:06d}abcdefghijklmnop" for i in range(2_000)],
                          "api_key": [f"q9Zk2LmX8vB3nR7tW1pY5sD{i:06d}" for i in range(2_000)]})
    found = credential_variable_values({"users": users}.items())
    assert len(found) == MAX_FRAME_VALUES and found[0] == "$2b$12$h000000abcdefghijklmnop"


def test_a_collection_named_as_credentials_gives_its_items_by_the_rule_of_its_name() -> None:
    """``db_passwords = {"prod": …, "dev": …}``, ``API_KEYS = {"cohere": …}``, ``passwords = [...]``:
    the keys (``prod``, ``cohere``) name no credential and a plural was no credential name, so each
    value went to the model in the variables' descriptions (attacker pass 15)."""
    cohere = "Qm3xT9vL2pR7wK4nB8cF1hJ6dS5gA0eY"
    namespace = {"db_passwords": {"prod": "Prod-Pw-2024!", "dev": "Dev-Pw-2024!"},
                 "API_KEYS": {"cohere": cohere, "model": "command-r-plus"},
                 "passwords": ["List-Pw-2024!"], "tokens": {HF_TOKEN, "tokenization"},
                 "config": {"api_keys": {"hf": HF_TOKEN}, "secrets": (b"Bytes-Pw-2024!",)}}
    assert set(credential_variable_values(namespace.items())) == {
        "Prod-Pw-2024!", "Dev-Pw-2024!", cohere, "List-Pw-2024!", HF_TOKEN, "Bytes-Pw-2024!"}


def test_a_credentials_record_keeps_its_other_values_and_a_plural_of_no_credential_gives_nothing() -> None:
    """A mapping one of whose keys names a credential is one record: its user and host are no secrets;
    ``keys`` of plain words and ``statuses`` (not a credential's plural) stay readable."""
    namespace = {"credentials": {"username": "analyst01", "host": "db.example.com", "password": "Rec-Pw-2024!"},
                 "keys": ["order_date", "customer_id"], "statuses": ["Active-Pw-2024!"],
                 "passwords": list(range(10))}
    assert credential_variable_values(namespace.items()) == ("Rec-Pw-2024!",)


def test_records_nested_in_a_frames_cells_give_their_secrets() -> None:
    """``pd.DataFrame(json.load(f))`` keeps each record's ``{"password": …, "user": …}`` whole in one
    cell: the frame's sample rows showed the password (cut at pandas' column width, most of it
    there), as the same records in a list were ``[redacted]`` (attacker pass 15)."""
    import pandas as pd

    records = [{"name": "prod", "auth": {"password": "Nested-Pw-2024!", "user": "ana"}},
               {"name": "dev", "auth": {"password": "Nested-Pw-2025!", "user": "bob"}},
               {"name": "ci", "auth": [{"token": HF_TOKEN}]}]
    frame = pd.DataFrame(records)
    assert credential_variable_values({"conns": frame}.items()) == ("Nested-Pw-2024!", "Nested-Pw-2025!", HF_TOKEN)
    assert credential_variable_values({"auths": frame["auth"]}.items()) == ("Nested-Pw-2024!", "Nested-Pw-2025!", HF_TOKEN)
    assert credential_variable_values({"plain": pd.DataFrame({"meta": [{"user": "ana"}], "n": [1]})}.items()) == ()


def test_a_frames_password_index_multiindex_column_and_bytes_are_secrets_too() -> None:
    """``users.set_index("password")`` (the index line and sample rows show it), a ``("db", "password")``
    column of a ``MultiIndex``, and bytes in a ``password`` column went to the model (attacker pass 15)."""
    import pandas as pd

    users = pd.DataFrame({"user": ["ana", "bob"], "password": ["Index-Pw-2024!", "Index-Pw-2025!"]})
    wide = pd.DataFrame([[5432, "Multi-Pw-2024!"]], columns=pd.MultiIndex.from_tuples([("db", "port"), ("db", "password")]))
    raw = pd.DataFrame({"user": ["ana"], "password": [b"Bytes-Pw-2024!"]})
    found = credential_variable_values({"by_pw": users.set_index("password"), "wide": wide, "raw": raw}.items())
    assert found == ("Index-Pw-2024!", "Index-Pw-2025!", "Multi-Pw-2024!", "Bytes-Pw-2024!")


def test_a_polars_frames_credential_columns_give_their_values_as_a_pandas_frames_do() -> None:
    """The kernel context describes a polars frame with its distinct values and sample rows; only
    pandas' frames were read for credential columns, so a polars users table sent its passwords
    (attacker pass 15)."""
    pl = pytest.importorskip("polars")

    users = pl.DataFrame({"user": ["ana", "bob"], "password": ["Polars-Pw-2024!", "Polars-Pw-2025!"],
                          "token_count": [3, 4], "api_key": [API_KEY, "not a key at all"]})
    assert credential_variable_values({"users": users}.items()) == ("Polars-Pw-2024!", "Polars-Pw-2025!", API_KEY)
    assert credential_variable_values({"pw": users["password"], "n": users["token_count"]}.items()) == (
        "Polars-Pw-2024!", "Polars-Pw-2025!")


def test_a_dotenv_files_text_held_by_a_variable_gives_its_secrets() -> None:
    """``open(".env").read()`` as a cell's value (``Out[n]``) or in a variable: the kernel context
    showed its ``DB_PASSWORD=…`` line to the model at every prompt (attacker pass 15)."""
    text = "DB_HOST=db.internal\nDB_PASSWORD=S3cr3t-Pw-2024\nexport OPENAI_API_KEY=" + API_KEY + "\nSORT_KEY=order_date\n"
    assert credential_variable_values({"Out": {1: text}, "env_text": text}.items()) == ("S3cr3t-Pw-2024", API_KEY)
    assert credential_variable_values({"notes": "Remember: rotate the key\nOwner: ana\n"}.items()) == ()


def test_a_namedtuples_fields_are_read_by_their_names() -> None:
    """``Creds("ana", "…")``: a namedtuple was described by its type, but the cell that made it shows
    the password as a positional literal, which no name marks (attacker pass 15)."""
    from collections import namedtuple

    Creds = namedtuple("Creds", "user password")  # noqa: PYI024 - the common, untyped form
    assert credential_variable_values({"c": Creds("ana", "Tuple-Pw-2024!")}.items()) == ("Tuple-Pw-2024!",)


def test_collections_of_ids_named_keys_are_no_secrets_but_api_keys_and_tokens_are():
    ids = ["3f2a9c1e-7b4d-4e8a-9c21-5d6e7f8a9b0c", "9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e"]  # a uuid, an md5
    for name in ("keys", "primary_keys", "cache_keys"):
        assert credential_variable_values({name: list(ids)}.items()) == ()
    assert credential_variable_values({"API_KEYS": {"openai": HF_TOKEN}}.items()) == (HF_TOKEN,)
    vendor = "9f3b2c7e1a8d4f6b0c5e2a9d7b3f1e8c"  # an Azure key: 32 hex digits under a vendor's plural
    assert credential_variable_values({"azure_keys": {"eastus": vendor}}.items()) == (vendor,)
    assert credential_variable_values({"hf_tokens": [HF_TOKEN]}.items()) == (HF_TOKEN,)


def test_a_name_about_a_password_gives_nothing_and_a_password_s_own_name_still_does() -> None:
    """Review of atk21: a DataFrame's ``password_strength`` column (and records, printed JSON) was hidden from
    every text the model read, as ``password_min_length`` or ``password_changed_at`` would be."""
    import pandas as pd

    from nbagent.engine.credentials.output_secrets import output_secrets

    df = pd.DataFrame({"user": ["ana", "bo"], "password_strength": ["moderate-high", "very-strong-pw"],
                       "password_changed_at": ["2024-01-03T10:00", "2024-02-03T11:00"]})
    assert credential_variable_values([("df", df), ("rows", df.to_dict("records")),
                                       ("policy", {"password_min_length": "twelve-chars", "secret_count": "seventeen"})]) == ()
    assert output_secrets(df.to_json(orient="records")) == ()
    kept = {"db_password": "Zq7-Loud-Tiger-42", "DB_PASSWORD_PROD": "correct horse battery", "password_hash": "pbkdf2-hash-x"}
    assert set(credential_variable_values(kept.items())) == set(kept.values())
