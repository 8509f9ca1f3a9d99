"""The sanitising boundary: depth limit found on the way down, strings cleaned everywhere, and the
lazily copied child environment."""

from __future__ import annotations

from typing import Any

import pytest

from nbagent.engine.credentials.env_secrets import ChildEnvironment
from nbagent.engine.loop.sanitize import REDACTED, Sanitizer, TooDeepError


def nested(depth: int, leaf: Any = "x") -> Any:
    value = leaf
    for i in range(depth):
        value = {"k": value} if i % 2 else [value]
    return value


def test_a_value_exactly_at_the_depth_limit_is_cleaned_and_one_level_more_is_refused() -> None:
    sanitizer = Sanitizer(max_depth=8)
    cleaned, replaced = sanitizer.value(nested(8))
    assert cleaned == nested(8) and replaced == 0
    with pytest.raises(TooDeepError, match="nested deeper than 8 levels"):
        sanitizer.value(nested(9))


def test_a_value_far_deeper_than_the_limit_is_refused_without_recursing_through_it() -> None:
    with pytest.raises(TooDeepError):
        Sanitizer().value(nested(100_000))  # a RecursionError would mean it walked the whole value


def test_secrets_and_lone_surrogates_are_replaced_in_keys_values_and_tuples() -> None:
    sanitizer = Sanitizer(secrets=("sk-secret-123",))
    value = {"sk-secret-123": ("bad \udcff", ["key sk-secret-123 here"]), "n": 3}
    cleaned, replaced = sanitizer.value(value)
    assert cleaned == {REDACTED: ["bad \ufffd", [f"key {REDACTED} here"]], "n": 3}
    assert replaced == 1


def test_with_no_secrets_surrogates_are_replaced_in_keys_values_and_string_subclasses() -> None:
    """The no-secrets fast path keeps plain ASCII strings as they are and cleans everything else."""

    class Name(str):
        pass

    value = {"ok": "plain", "bad \udcff": ["x \udcff", Name("y \udcff")], Name("k \udcff"): Name("ascii")}
    cleaned, replaced = Sanitizer().value(value)
    assert cleaned == {"ok": "plain", "bad \ufffd": ["x \ufffd", "y \ufffd"], "k \ufffd": "ascii"}
    assert replaced == 4
    assert cleaned["ok"] is value["ok"]


def test_the_child_environment_is_copied_when_first_read_without_the_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NBAGENT_TEST_KEY", "value-of-the-key")
    monkeypatch.setenv("NBAGENT_TEST_OTHER", "holds value-of-the-key")
    env = ChildEnvironment(["NBAGENT_TEST_KEY"], ["value-of-the-key"])
    monkeypatch.setenv("NBAGENT_TEST_LATER", "set before the first read")
    copied = dict(env)
    assert "NBAGENT_TEST_KEY" not in copied and copied["NBAGENT_TEST_LATER"] == "set before the first read"
    monkeypatch.setenv("NBAGENT_TEST_AFTER", "x")
    assert "NBAGENT_TEST_AFTER" not in env and len(env) == len(copied)  # one copy, kept


def test_the_child_environment_holds_no_credential_by_name_by_value_or_by_shape(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NBAGENT_TEST_URL", "postgres://ann:value-of-the-key@db/prod")  # holds a secret value
    monkeypatch.setenv("NBAGENT_TEST_HEADER", "Authorization: Bearer abcdefghijklmnop0123")  # a token's shape
    monkeypatch.setenv("NBAGENT_TEST_PASTED", "sk-ant-api03-abcdefghijklmnop")  # a key no one configured
    for name in ("OPENAI_API_KEY", "GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY", "DB_PASSWORD", "hf_token", "JUPYTER_TOKEN"):
        monkeypatch.setenv(name, "anything")
    monkeypatch.setenv("NBAGENT_TEST_PLAIN", "https://example.org/data.csv")
    monkeypatch.setenv("TOKENIZERS_PARALLELISM", "false")  # a word that starts like one is no credential

    copied = dict(ChildEnvironment([], ["value-of-the-key"]))

    assert {"NBAGENT_TEST_PLAIN", "TOKENIZERS_PARALLELISM", "PATH"} <= set(copied)
    assert not {"NBAGENT_TEST_URL", "NBAGENT_TEST_HEADER", "NBAGENT_TEST_PASTED", "OPENAI_API_KEY", "GITHUB_TOKEN",
                "AWS_SECRET_ACCESS_KEY", "DB_PASSWORD", "hf_token", "JUPYTER_TOKEN"} & set(copied)


def test_credentials_tools_name_their_own_way_are_kept_from_the_child_and_redacted(monkeypatch: pytest.MonkeyPatch) -> None:
    """``PGPASSWORD`` (psql's), ``MYSQL_PWD``, ``KAGGLE_KEY``, an Azure ``..._ACCOUNT_KEY``, a ``GITHUB_PAT``,
    a ``SLACK_WEBHOOK_URL``: none matched the credential words, so the shell tool got them and a cell's
    ``print(os.environ)`` sent them to the model (attacker pass 10)."""
    from nbagent.engine.credentials.env_secrets import credential_env_values

    named = ("PGPASSWORD", "MYSQL_PWD", "KAGGLE_KEY", "AZURE_STORAGE_ACCOUNT_KEY", "GITHUB_PAT", "SLACK_WEBHOOK_URL")
    for i, name in enumerate(named):
        monkeypatch.setenv(name, f"value-{i}-Zq8rT2vLx9Wm")
    for name in ("PWD", "LD_LIBRARY_PATH", "SORT_KEY", "PATTERN"):  # words that are no credential
        monkeypatch.setenv(name, "/not/a/secret")
    copied = dict(ChildEnvironment([], []))
    assert not set(named) & set(copied)
    assert {"PWD", "PATH", "LD_LIBRARY_PATH", "SORT_KEY", "PATTERN"} <= set(copied)
    assert {f"value-{i}-Zq8rT2vLx9Wm" for i in range(len(named))} <= set(credential_env_values())


def test_a_url_or_connection_string_password_in_the_environment_is_redacted_whatever_its_name(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``DATABASE_URL=postgresql://analyst:…@db/sales`` matched no credential word: a cell's
    ``print(os.environ)`` sent its password to the model (attacker pass 11)."""
    from nbagent.engine.credentials.env_secrets import credential_env_values

    monkeypatch.setenv("DATABASE_URL", "postgresql://analyst:Tr0ub4dor-x9@db.internal:5432/sales")
    monkeypatch.setenv("NBAGENT_TEST_SITE", "https://example.com/a@b")  # no password: nothing taken
    monkeypatch.setenv("AZURE_STORAGE_CONNECTION_STRING", "DefaultEndpointsProtocol=https;AccountName=a;"
                                                          "AccountKey=Zm9vYmFyYmF6cXV4MTIzNDU2==;EndpointSuffix=x")
    assert {"Tr0ub4dor-x9", "Zm9vYmFyYmF6cXV4MTIzNDU2=="} <= set(credential_env_values())
    assert not any("example.com" in v or v == "b" for v in credential_env_values())


def test_a_secret_cut_short_by_a_display_is_redacted_up_to_the_cut() -> None:
    token = "Zq7abcdefghijkLMNOPQRSTUVWxyz0123456789A"
    s = Sanitizer((token,))
    text = f"levels: ['{token[:38]}…', 'x'], pandas: {token[:20]}..., short: {token[:10]}…, whole: {token}"
    assert s.redact_values(text) == "levels: ['[redacted]…', 'x'], pandas: [redacted]..., short: Zq7abcdefg…, whole: [redacted]"
    assert s.redact_values(f"{token[:30]} goes on") == f"{token[:30]} goes on"  # no cut: not this rule's
    assert s.redact_values("plain text ... nothing secret…") == "plain text ... nothing secret…"



def test_a_key_or_password_named_by_the_notebooks_rule_is_kept_from_the_child_and_redacted(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``OPENAI_KEY``, ``AZURE_OPENAI_KEY`` (a generated value) and ``DB_PASS`` hold no credential word of the
    environment's rule: ``print(os.environ)`` sent them to the model and the shell tool got them, while
    a notebook variable of the same name was redacted (attacker pass 13)."""
    from nbagent.engine.credentials.env_secrets import credential_env_values

    named = {"OPENAI_KEY": "Zk3LqW9xT2mP7rV4bN8cY1hJ6dF0sA5gE", "AZURE_OPENAI_KEY": "3f9a2c7e1b4d8f6a0c5e9b2d7f1a4c8e",
             "DB_PASS": "hunter2hunter2"}
    plain = {"SORT_KEY": "order_date", "GPG_KEY": "ABCD1234EF567890", "SSH_AUTH_SOCK": "/run/user/1000/ssh"}
    for name, value in {**named, **plain}.items():
        monkeypatch.setenv(name, value)
    copied = dict(ChildEnvironment([], []))
    assert not set(named) & set(copied) and set(plain) <= set(copied)
    assert set(named.values()) <= set(credential_env_values())
    assert not set(plain.values()) & set(credential_env_values())


def test_a_gateway_key_kept_in_the_sdks_custom_headers_is_kept_from_the_child_and_redacted(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``ANTHROPIC_CUSTOM_HEADERS`` (headers the SDK adds to every request) is where a gateway's key is
    often kept; its name is no credential's, so the shell tool's ``env`` or a cell's ``print(os.environ)``
    sent the key to the model (attacker pass 24)."""
    from nbagent.engine.credentials.env_secrets import credential_env_values

    monkeypatch.setenv("ANTHROPIC_CUSTOM_HEADERS", "x-portkey-api-key: pk9f3a7c2e1b8d4f6a0c5e\n"
                                                   "Helicone-Auth: Bearer sk-helicone-7d2f9a1c\nanthropic-beta: x-1")
    found = set(credential_env_values())
    assert {"pk9f3a7c2e1b8d4f6a0c5e", "Bearer sk-helicone-7d2f9a1c", "sk-helicone-7d2f9a1c"} <= found
    assert "x-1" not in found
    text = "ANTHROPIC_CUSTOM_HEADERS=x-portkey-api-key: pk9f3a7c2e1b8d4f6a0c5e\nHelicone-Auth: Bearer sk-helicone-7d2f9a1c"
    assert "pk9f3a" not in Sanitizer(tuple(found)).redact(text) and "7d2f9a1c" not in Sanitizer(tuple(found)).redact(text)
    assert "ANTHROPIC_CUSTOM_HEADERS" not in dict(ChildEnvironment([], []))
    monkeypatch.setenv("ANTHROPIC_CUSTOM_HEADERS", "anthropic-beta: x-1")  # no credential: the tool keeps it
    assert "ANTHROPIC_CUSTOM_HEADERS" in dict(ChildEnvironment([], []))


def test_a_gateways_tracing_headers_in_the_sdks_custom_headers_are_no_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    """Review of pass 24: a header named with a credential's word as part of another
    (``Helicone-Session-Name``, ``X-Token-Budget``, ``x-keyword``) made its value a secret, and an ordinary
    first word a scheme's: ``Course analysis`` redacted every ``analysis`` the model saw, and a session
    path kept every variable holding it (``PROJECT_DIR``) from the shell tool's process."""
    from nbagent.engine.credentials.env_secrets import credential_env_values

    monkeypatch.setenv("ANTHROPIC_CUSTOM_HEADERS", "Helicone-Session-Name: Course analysis\n"
                                                   "Helicone-Session-Path: /home/jovyan/work\n"
                                                   "x-litellm-session-id: notebook-analysis\nX-Token-Budget: 100000000\n"
                                                   "x-keyword: analysis-report\nX-Auth-Token: tok-7d2f9a1c-xyz")
    monkeypatch.setenv("PROJECT_DIR", "/home/jovyan/work/sales")
    found = set(credential_env_values())
    assert "tok-7d2f9a1c-xyz" in found
    assert not found & {"Course analysis", "analysis", "/home/jovyan/work", "notebook-analysis", "100000000",
                        "analysis-report"}
    assert "PROJECT_DIR" in dict(ChildEnvironment([], Sanitizer(tuple(found)).secrets))
