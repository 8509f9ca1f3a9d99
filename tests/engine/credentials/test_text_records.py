"""A variable's text holding a record: a serialised config (``json.dumps(cfg)``) and a form body
(``user=ana&password=…``). Both went to the model in the variable's description while the same dict was
redacted (atk17 F5, redone bounded in sec18)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from nbagent.engine.credentials import text_records
from nbagent.engine.credentials.kernel_secrets import credential_variable_values

CONFIG = {"user": "ana", "password": "Js7-q2#Lm9xx-Zz", "port": 5432}
TOKEN = "tkn_9fQ2Lx7Pw4Zr8Mn3Bv6"


@pytest.fixture(autouse=True)
def _forget_texts() -> Iterator[None]:
    """Each test starts with no text remembered (the memory is the process's)."""
    text_records.forget()
    yield
    text_records.forget()


def _count_parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    parsed: list[str] = []
    parse = text_records.TextScans._parsed

    def counted(self: text_records.TextScans, name: object, value: str, form: bool) -> tuple[str, ...]:
        parsed.append(value)
        return parse(self, name, value, form)

    monkeypatch.setattr(text_records.TextScans, "_parsed", counted)
    return parsed


def test_a_serialised_configs_password_is_a_secret_on_one_line_or_indented() -> None:
    assert credential_variable_values({"payload": json.dumps(CONFIG)}.items()) == ("Js7-q2#Lm9xx-Zz",)
    assert credential_variable_values({"pretty": json.dumps(CONFIG, indent=2)}.items()) == ("Js7-q2#Lm9xx-Zz",)


def test_a_nested_json_records_password_is_a_secret_in_a_variable_or_a_dict() -> None:
    nested = json.dumps({"services": {"db": {"auth": {"password": "Nj7-q2#Lm9xx-Zz"}}}, "rows": [{"api_token": "x"}]})
    listed = json.dumps([{"name": "prod", "password": "Lj7-q2#Lm9xx-Zz"}])
    assert credential_variable_values({"nested": nested, "listed": listed}.items()) == ("Nj7-q2#Lm9xx-Zz", "Lj7-q2#Lm9xx-Zz")
    assert credential_variable_values({"cfgs": {"prod": json.dumps(CONFIG)}}.items()) == ("Js7-q2#Lm9xx-Zz",)


def test_a_form_bodys_password_is_a_secret_as_the_server_reads_it() -> None:
    body = "user=ana&password=Fb7-q2%23Lm9xx-Zz&remember=1"
    assert credential_variable_values({"body": body}.items()) == ("Fb7-q2#Lm9xx-Zz",)


@pytest.mark.usefixtures("collections_keep_stack_left")
def test_prose_logs_searches_and_ordinary_json_give_nothing() -> None:
    texts = {"records": json.dumps([{"id": i, "key": f"k{i}", "tokens": i % 900, "tokenizer": "gpt2"} for i in range(300)]),
             "log": "[INFO] password reset for ana: token sent", "search": "q=password+reset&page=2&sort=new",
             "prose": "the key to the 'data' is \"clean\": ask about token counts and the password policy.",
             "deep": "[" * 10_000 + '"password"'}
    assert credential_variable_values(texts.items()) == ()


def test_thousands_of_short_form_texts_are_parsed_once_each_within_a_walks_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    # Review2 of atk17, HIGH 1: every one-line text was scanned at every walk, with no budget.
    parsed = _count_parses(monkeypatch)
    plain = {f"log{j}": {f"r{i}": f"a{i}=b&c=d{j}" for i in range(1_000)} for j in range(10)}
    assert credential_variable_values(plain.items()) == ()
    assert parsed == []  # naming no credential, they are remembered without being parsed
    named = {f"log{j}": {f"r{i}": f"user=u{i}&token_count={i}{j}" for i in range(1_000)} for j in range(10)}
    counts = []
    for _ in range(1_000 // text_records.MAX_VARIABLE_SCANS * 10 + 1):  # a bound, not expected to be reached
        parsed.clear()
        assert credential_variable_values(named.items()) == ()
        counts.append(len(parsed))
        if not parsed:
            break
    assert counts[-1] == 0  # all remembered: a walk parses none
    assert max(counts) <= text_records.MAX_TEXT_SCANS and sum(counts) == 10_000  # each parsed once


def test_thousands_of_texts_with_secrets_give_a_bounded_number_each_parsed_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # Review2 of atk17, MEDIUM 2: past 1,024 found texts, about half were never redacted again. Review of sec18,
    # MEDIUM 1: 10,000 texts gave 10,000 secrets, each one more form the sanitizer scans every text for.
    parsed = _count_parses(monkeypatch)
    caches = {f"c{j}": {f"p{i}": json.dumps({"access_token": f"tok{j}{i:05d}Zq8Lm2Xp4Rt6Vb9Nc3Kd"}) for i in range(1_000)}
              for j in range(10)}
    caches["cfgs"] = {"prod": json.dumps(CONFIG)}
    walks = [credential_variable_values(caches.items()) for _ in range(text_records.MAX_VARIABLE_SECRETS // 10)]
    containers_cap = text_records.MAX_TEXT_SECRETS - text_records.OWN_TEXT_SECRETS  # the rest is own texts'
    assert len(walks[-1]) == containers_cap and walks[-1] == walks[-2]
    assert len(parsed) == len(set(parsed)) < text_records.MAX_TEXT_SECRETS + text_records.MAX_TEXT_SCANS  # each once
    parsed.clear()
    assert credential_variable_values(caches.items()) == walks[-1] and parsed == []
    first = {"cfgs": caches.pop("cfgs"), **caches}  # the cap is a namespace's, as the dict walk's 500 mappings
    assert "Js7-q2#Lm9xx-Zz" in credential_variable_values(first.items())


def test_a_token_repeated_in_many_logs_counts_once_and_a_config_text_after_them_is_read_at_every_walk() -> None:
    # Second review of sec18, MEDIUM A: each remembered log text charged its token again, so one token filled
    # the 500 cap from the second walk on and cfg_json's password, found at the first, was dropped.
    logs: dict[str, object] = {f"log{k}": {f"r{i}": json.dumps({"req": i, "access_token": TOKEN}) for i in range(200)}
                               for k in range(5)}
    logs["cfg_json"] = json.dumps(CONFIG)
    for _ in range(6):
        assert sorted(credential_variable_values(logs.items())) == sorted([TOKEN, "Js7-q2#Lm9xx-Zz"])


def test_a_config_text_after_caches_that_fill_the_containers_cap_is_read_at_every_walk() -> None:
    # Second review of sec18, MEDIUM A: five remembered caches of 200 tokens took the whole cap from the third
    # walk on; a variable's own text now has a share that texts inside containers cannot take.
    caches: dict[str, object] = {f"oauth{k}": {f"r{i}": json.dumps({"access_token": f"ya29.A0{k:02d}{i:04d}xQ7vLp2Zk9R"})
                                               for i in range(200)} for k in range(5)}
    caches["cfg_json"] = json.dumps(CONFIG)
    for _ in range(6):
        assert "Js7-q2#Lm9xx-Zz" in credential_variable_values(caches.items())


def test_the_memory_keeps_a_variables_share_of_a_texts_secrets_within_a_bound_in_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    # Second review of sec18, LOW C: entries kept every secret of their text, 16 KB each, 3.3 GB at the count bound.
    monkeypatch.setattr(text_records, "MAX_REMEMBERED_BYTES", 200_000, raising=False)
    many = json.dumps({f"password_{i}": f"Pw-{i:04d}-q2#Lm9xx" for i in range(150)})
    credential_variable_values({"many": many}.items())
    assert [len(kept) for kept in text_records._REMEMBERED.values()] == [text_records.MAX_VARIABLE_SECRETS]
    for j in range(100):  # 100 texts of 4 passwords of 3,000 characters: 1.2 MB of secrets
        text = json.dumps({f"{p}_password": f"{j}-{p}-" + "k7Q" * 1_000 for p in ("db", "smtp", "ftp", "api")})
        credential_variable_values({f"cfg{j}": text}.items())
    held = sum(len(secret) for kept in text_records._REMEMBERED.values() for secret in kept)
    assert 0 < held <= 200_000 and len(text_records._REMEMBERED) < 101


def test_a_dict_of_configs_behind_megabytes_of_clean_texts_is_read_at_the_first_walk() -> None:
    # Review of sec18, MEDIUM 2: texts naming no credential spent the walk's characters before cfgs' text.
    def text(j: int, i: int) -> str:  # exactly 10,000 characters: the caches' texts spend all of 1 MB
        head = json.dumps({"id": f"m{j}_{i:03d}", "body": ""})[:-2]
        return head + "x" * (10_000 - len(head) - 2) + '"}'
    caches: dict[str, object] = {f"cache{j}": {f"p{i}": text(j, i) for i in range(100)} for j in range(3)}
    caches["cfgs"] = {"prod": json.dumps(CONFIG)}
    assert credential_variable_values(caches.items()) == ("Js7-q2#Lm9xx-Zz",)


def test_a_full_memory_forgets_its_least_used_results_not_a_later_variables_config(monkeypatch: pytest.MonkeyPatch) -> None:
    # Review of sec18, MEDIUM 2: past the bound the memory was cleared, and cfgs was never read again.
    monkeypatch.setattr(text_records, "MAX_REMEMBERED", 1_000)
    logs: dict[str, object] = {f"log{j}": {i: f"page={j}&item={i}&x={'y' * 400}" for i in range(1_000)} for j in range(3)}
    logs["cfgs"] = {"prod": json.dumps(CONFIG)}
    for _ in range(3):
        assert credential_variable_values(logs.items()) == ("Js7-q2#Lm9xx-Zz",)
        assert len(text_records._REMEMBERED) <= 1_000


def test_a_json_list_is_read_by_the_name_it_is_held_under_whatever_held_it_first() -> None:
    # Review of sec18, LOW 5: IPython's _ holding the same text first left passwords' items unread for good.
    held = json.dumps(["pass-Kv7-q2#Lm9", "Lm9xx-Zz-22-pass"])
    assert credential_variable_values([("_", held), ("passwords", held)]) == ("pass-Kv7-q2#Lm9", "Lm9xx-Zz-22-pass")
    assert credential_variable_values([("passwords", held)]) == ("pass-Kv7-q2#Lm9", "Lm9xx-Zz-22-pass")
    assert credential_variable_values([("_", held)]) == ()


def test_a_plain_word_under_a_passwords_name_is_no_secret_in_a_json_text_as_in_a_settings_table() -> None:
    # Review of sec18, MEDIUM 4: the two routes of a record held as data disagreed on a glossary's word.
    assert credential_variable_values({"de": json.dumps({"login.password": "Passwort", "password": "Geheim"})}.items()) == ()


def test_a_variables_own_text_is_read_after_a_cache_that_used_up_the_containers_budget() -> None:
    cache = {f"prompt {i}": json.dumps({"id": f"msg_v_{i:05d}", "usage": {"input_tokens": i}}) for i in range(1_000)}
    payload = json.dumps({"user": "ana", "password": "After-Pw-2024-xq"})
    assert credential_variable_values({"cache": cache, "payload": payload}.items()) == ("After-Pw-2024-xq",)


def test_a_dict_of_configs_behind_large_caches_of_token_naming_texts_is_read_at_the_first_walk() -> None:
    # Review2 of atk17, MEDIUM 2(b): the walk's budget always went to the first containers' texts.
    caches: dict[str, object] = {f"cache{j}": {f"p{i}": json.dumps({"id": f"m{j}_{i}", "usage": {"input_tokens": i}})
                                               for i in range(2_000)} for j in range(2)}
    caches["cfgs"] = {"prod": json.dumps(CONFIG)}
    assert credential_variable_values(caches.items()) == ("Js7-q2#Lm9xx-Zz",)


def test_keys_naming_a_credential_with_dots_spaces_or_brackets_are_read_as_the_dict_rule_reads_them() -> None:
    # Review2 of atk17, LOW 4: a pre-filter narrower than the rule dropped these.
    for key in ("db.password.prod", "password (prod)", "Password for prod", "secret.value"):
        assert credential_variable_values({"t": json.dumps({key: "Sp7-q2#Lm9xx-Zz"})}.items()) == ("Sp7-q2#Lm9xx-Zz",), key
    assert credential_variable_values({"t": json.dumps({"API Key (prod)": TOKEN})}.items()) == (TOKEN,)


def test_record_texts_leave_the_walks_other_budgets_to_password_columns() -> None:
    pd = pytest.importorskip("pandas")
    texts: dict[str, object] = {f"t{i}": json.dumps({f"k{j}": {"a": j} for j in range(50)} | {"key": "x"}) for i in range(600)}
    texts["users"] = pd.DataFrame({"user": ["ana"], "password": ["Kv7-q2#Lm9xx-Zz"]})
    texts["config"] = {"db": {"password": "Dict-Pw-2024-xq"}}
    assert credential_variable_values(texts.items()) == ("Kv7-q2#Lm9xx-Zz", "Dict-Pw-2024-xq")
