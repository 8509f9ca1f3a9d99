"""A credential's name held as data beside its value in a frame: a settings table's ``key``/``value``
columns, a record as a Series (``users.iloc[0]``: its labels say "password", not its name). Both went
to the model in the frame's description and sample rows (atk17 F4, redone bounded in sec18)."""

from __future__ import annotations

import io

import pytest

from nbagent.engine.credentials import frame_secrets
from nbagent.engine.credentials.kernel_secrets import credential_variable_values

pd = pytest.importorskip("pandas")

PW, TOKEN = "Kv7-q2#Lm9xx-Zz", "tkn_9fQ2Lx7Pw4Zr8Mn3Bv6"


def test_a_settings_tables_values_beside_a_credentials_name_are_secrets() -> None:
    settings = pd.DataFrame({"key": ["host", "user", "password", "api_token"], "value": ["db.internal", "ana", PW, TOKEN]})
    assert credential_variable_values({"settings": settings}.items()) == (PW, TOKEN)


def test_a_settings_file_read_without_headers_or_by_its_keys_gives_its_password() -> None:
    text = "host,db.internal\npassword,Kv7-q2#Lm9xx-Zz\n"
    frames = {"bare": pd.read_csv(io.StringIO(text), header=None),
              "by_key": pd.read_csv(io.StringIO("key,value\n" + text), index_col=0),
              "from_dict": pd.DataFrame.from_dict({"host": "db.internal", "password": PW}, orient="index")}
    for name, frame in frames.items():
        assert credential_variable_values({name: frame}.items()) == (PW,), name


def test_a_record_as_a_series_gives_the_values_its_labels_name_as_credentials() -> None:
    users = pd.DataFrame({"user": ["ana"], "password": ["Tt7-q2#Lm9xx-Qq"]})
    first = users.iloc[0]
    del users  # the table is gone: only the row's labels say "password"
    assert credential_variable_values({"first": first}.items()) == ("Tt7-q2#Lm9xx-Qq",)
    config = pd.Series({"host": "db.internal", "port": 5432, "db_password": "Series-Pw-2024!"})
    assert credential_variable_values({"config": config}.items()) == ("Series-Pw-2024!",)


def test_a_glossary_of_credential_words_hides_no_translation() -> None:
    glossary = pd.DataFrame({"en": ["password", "secret", "token", "sign in"],
                             "de": ["Passwort", "Geheimnis", "mot_de_passe", "Anmelden"]})
    tables = {"glossary": glossary, "by_word": glossary.set_index("en")["de"],
              "as_settings": pd.DataFrame({"key": ["password"], "value": ["Passwort"]}),  # a plain word is no password
              "widgets": pd.DataFrame({"field": ["username", "password"], "widget": ["TextInput", "PasswordInput"]}),
              "schema": pd.DataFrame({"column": ["user_id", "password"], "type": ["integer", "varchar(255)"]})}
    assert credential_variable_values(tables.items()) == ()


def test_an_auth_log_a_policy_table_and_a_rows_about_passwords_give_nothing() -> None:
    tables = {
        "events": pd.DataFrame({"event": ["login", "password_reset", "login"],
                                "user": ["ana@corp.com", "bob@corp.com", "carol@corp.com"]}),
        "log": pd.DataFrame({"key": ["password_reset", "login"], "value": ["bob@corp.com", "ana@corp.com"]}),
        "policy": pd.DataFrame({"setting": ["password_min_length", "token_lifetime"], "value": ["12", "3600s"]}),
        "columns": pd.Index(["user", "password_hash", "api_token_count"]).to_series(),
        "row": pd.DataFrame({"user": ["ana"], "password_changed_at": ["2024-01-03"], "token_count": ["123456789"]}).iloc[0],
    }
    assert credential_variable_values(tables.items()) == ()


def test_settings_tables_leave_password_columns_and_nested_records_their_budgets() -> None:
    # Review of atk17, HIGH 1: the keyed read spent the namespace's shared budgets first.
    found: dict[str, object] = {f"s{i}": pd.DataFrame({"key": ["password"], "value": [f"Set-Pw-{i:03d}-xq"]})
                                for i in range(2 * frame_secrets.KEYED_FRAMES)}
    found.update({f"t{i}": pd.DataFrame({"key": ["a", "b"], "value": ["u", "v"]}) for i in range(60)})
    found["users"] = pd.DataFrame({"user": ["ana", "bob"], "password": [PW, "Pw9-Rt4$Ux2-Aa"]})
    found["recs"] = pd.DataFrame({"id": [1], "rec": [{"user": "ana", "password": "Nest-Pw-2024-xx"}]})
    secrets = credential_variable_values(found.items())
    assert {PW, "Pw9-Rt4$Ux2-Aa", "Nest-Pw-2024-xx"} <= set(secrets)
    assert len([s for s in secrets if s.startswith("Set-Pw-")]) == frame_secrets.KEYED_VALUES


def test_key_value_tables_and_series_whose_values_are_rejected_are_read_within_a_frames_budget(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # Review of sec18, MEDIUM 3: a frame was counted only when it gave a value, so 500 tables of
    # ``svc_api_token`` → ``n/a`` went through the rule row by row at every walk (10× main's walk).
    calls: list[str] = []
    rule = frame_secrets._secret_by_name

    def counted(key: str, value: str) -> bool:
        calls.append(key)
        return rule(key, value)

    monkeypatch.setattr(frame_secrets, "_secret_by_name", counted)
    keys, values = [f"svc{i}_api_token" for i in range(100)], [f"n/a-{i}" for i in range(100)]
    tables: dict[str, object] = {f"f{k}": pd.DataFrame({"key": keys, "value": values}) for k in range(250)}
    tables.update({f"s{k}": pd.Series(dict(zip(keys, values, strict=True))) for k in range(250)})
    assert credential_variable_values(tables.items()) == ()
    assert len(calls) <= frame_secrets.KEYED_FRAMES * frame_secrets.KEYED_ROWS


def test_series_of_plain_labels_have_their_keys_read_within_a_namespaces_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    # Review of sec18, MEDIUM 3: 500 text-indexed Series had their labels read and joined at every walk.
    reads: list[int] = []
    key_text = frame_secrets._key_text

    def counted(keys: list[object]) -> str:
        reads.append(len(keys))
        return key_text(keys)

    monkeypatch.setattr(frame_secrets, "_key_text", counted)
    rows = {f"s{k}": pd.Series({f"col{i}": f"v{i}" for i in range(100)}) for k in range(500)}
    rows["config"] = pd.Series({"user": "ana", "password": PW})
    assert credential_variable_values(rows.items()) == ()  # past the bound: read at no walk, as main
    assert len(reads) == frame_secrets.KEYED_LOOKS
    assert credential_variable_values({"config": rows.pop("config"), **rows}.items()) == (PW,)
