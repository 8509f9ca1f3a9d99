"""A credential's name held as data beside its value in a frame: a settings table's ``key``/``value``
columns, a record as a Series (``users.iloc[0]``: its labels say "password", not its name). Both
went to the model in the frame's description and sample rows (attacker pass 17)."""

from __future__ import annotations

import pytest

from nbagent.engine.loop.kernel_secrets import credential_variable_values

pd = pytest.importorskip("pandas")


def test_a_settings_tables_values_beside_a_credentials_name_are_secrets() -> None:
    settings = pd.DataFrame({"key": ["host", "user", "password", "api_token"],
                             "value": ["db.internal", "ana", "Kv7-q2#Lm9xx-Zz", "tkn_9fQ2Lx7Pw4Zr8Mn3Bv6"]})
    assert set(credential_variable_values({"settings": settings}.items())) == {"Kv7-q2#Lm9xx-Zz", "tkn_9fQ2Lx7Pw4Zr8Mn3Bv6"}


def test_a_record_as_a_series_gives_the_values_its_labels_name_as_credentials() -> None:
    users = pd.DataFrame({"user": ["ana"], "password": ["Tt7-q2#Lm9xx-Qq"]})
    first = users.iloc[0]
    del users  # the table is gone: only the row's labels say "password"
    assert credential_variable_values({"first": first}.items()) == ("Tt7-q2#Lm9xx-Qq",)
    config = pd.Series({"host": "db.internal", "port": 5432, "db_password": "Series-Pw-2024!"})
    assert credential_variable_values({"config": config}.items()) == ("Series-Pw-2024!",)


def test_sentences_beside_a_credentials_name_and_ordinary_tables_give_nothing() -> None:
    survey = pd.DataFrame({"field": ["password", "user"], "note": ["Reset it every 90 days", "login name"]})
    sales = pd.DataFrame({"region": ["north", "south"] * 500, "product": ["a", "b"] * 500, "n": range(1000)})
    assert credential_variable_values({"survey": survey, "sales": sales}.items()) == ()


def test_wide_text_tables_are_not_read_for_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    from nbagent.engine.loop import frame_secrets

    joined: list[int] = []
    key_text = frame_secrets._key_text
    monkeypatch.setattr(frame_secrets, "_key_text", lambda keys: joined.append(len(text := key_text(keys))) or text)
    frames = {f"t{i}": pd.DataFrame({f"c{j}": [f"v{j}-{k}" for k in range(200)] for j in range(30)}) for i in range(300)}
    assert credential_variable_values(frames.items()) == ()
    assert joined == []  # only a two-column key/value table or a Series is a setting's shape


def test_tables_naming_a_token_leave_the_password_columns_their_budget() -> None:
    # Review of atk17, HIGH 1: the keyed walk spent the namespace's shared budgets first.
    tokens = pd.DataFrame({"name": ["api_token"] * 60, "owner": ["data-team"] * 60})
    events = pd.DataFrame({"event": ["password_reset", "login"] * 50, "user": [f"user{i:03d}" for i in range(100)]})
    users = pd.DataFrame({"user": ["ana", "bob"], "password": ["Kv7-q2#Lm9xx-Zz", "Pw9-Rt4$Ux2-Aa"]})
    found = credential_variable_values({"tokens": tokens, "events": events, "users": users}.items())
    assert found == ("Kv7-q2#Lm9xx-Zz", "Pw9-Rt4$Ux2-Aa")


def test_text_tables_leave_nested_records_their_budget() -> None:
    frames: dict[str, object] = {f"t{i}": pd.DataFrame({"a": ["x", "y"], "b": ["u", "v"]}) for i in range(60)}
    frames["recs"] = pd.DataFrame({"id": [1], "rec": [{"user": "ana", "password": "Nest-Pw-2024-xx"}]})
    assert credential_variable_values(frames.items()) == ("Nest-Pw-2024-xx",)


def test_an_auth_log_a_schema_and_a_data_dictionary_give_nothing() -> None:
    # Review of atk17, MEDIUM 3: each of these hid ordinary values (emails, IPs, dtypes) everywhere.
    tables = {
        "events": pd.DataFrame({"event": ["login", "password_reset", "login"],
                                "user": ["ana@corp.com", "bob@corp.com", "carol@corp.com"],
                                "status": ["succeeded", "succeeded", "failed"], "ip": ["10.0.0.12", "10.0.0.13", "10.0.0.14"]}),
        "resets": pd.DataFrame({"event": ["password_reset", "login"], "user": ["bob@corp.com", "ana@corp.com"]}),
        "schema": pd.DataFrame({"column": ["user_id", "password_hash"], "dtype": ["int64", "varchar(255)"]}),
        "schema3": pd.DataFrame({"column": ["user_id", "password"], "type": ["integer", "character_varying"],
                                 "nullable": ["NO", "YES"]}),
        "dictionary": pd.DataFrame({"name": ["password", "email"], "format": ["bcrypt_hash", "rfc5322_address"],
                                    "owner": ["security-team", "crm-team"]}),
        "policy": pd.DataFrame({"setting": ["password_min_length", "token_lifetime"], "value": ["12", "3600s"]}),
        "columns": pd.Index(["user", "password_hash", "api_token_count"]).to_series(),
        "row": pd.DataFrame({"user": ["ana"], "password_changed_at": ["2024-01-03"], "token_count": ["123456789"]}).iloc[0],
    }
    assert credential_variable_values(tables.items()) == ()


def test_only_short_key_cells_are_joined_for_a_credentials_word(monkeypatch: pytest.MonkeyPatch) -> None:
    # Review of atk17, HIGH 2: whole cells of page text were joined at every walk (seconds).
    from nbagent.engine.loop import frame_secrets

    joined: list[int] = []
    key_text = frame_secrets._key_text
    monkeypatch.setattr(frame_secrets, "_key_text", lambda keys: joined.append(len(text := key_text(keys))) or text)
    page = "password " * 2_000
    pages = {f"p{i}": pd.DataFrame({"html": [page] * 100, "url": ["u"] * 100}) for i in range(10)}
    assert credential_variable_values(pages.items()) == ()
    assert len(joined) == 10 and sum(joined) < 10 * 100 * (frame_secrets.KEYED_KEY_CHARS + 1)
