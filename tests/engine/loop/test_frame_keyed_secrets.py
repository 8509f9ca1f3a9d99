"""A credential's name held as data beside its value in a frame: a settings table's ``key``/``value``
columns, a record as a Series (``users.iloc[0]``: its labels say "password", not its name). Both
went to the model in the frame's description and sample rows (attacker pass 17)."""

from __future__ import annotations

import time

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


def test_many_text_tables_are_read_within_the_namespaces_bound() -> None:
    frames = {f"t{i}": pd.DataFrame({f"c{j}": [f"v{j}-{k}" for k in range(200)] for j in range(30)}) for i in range(300)}
    started = time.perf_counter()
    assert credential_variable_values(frames.items()) == ()
    assert time.perf_counter() - started < 1.0
