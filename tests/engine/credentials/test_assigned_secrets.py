"""A ``NAME=value`` / ``name: value`` line's value is the value alone: quoted or not, without the
inline comment after it (dotenv, YAML and shell end an unquoted value at `` #``, INI at `` ;``)."""

from __future__ import annotations

import pytest

from nbagent.engine.credentials.assigned_secrets import assigned_secrets

PASSWORD = "Zq7-Loud-Tiger-42"


@pytest.mark.parametrize("line", [
    f'password: "{PASSWORD}" # prod',
    f"password: '{PASSWORD}'   # rotated monthly",
    f"DB_PASSWORD={PASSWORD} # prod db",
    f"DB_PASSWORD={PASSWORD}\t# prod db",
    f'export DB_PASSWORD="{PASSWORD}" # prod',
    f'password = "{PASSWORD}" ; prod',
    f"password = {PASSWORD} ; prod",
])
def test_a_value_followed_by_a_comment_is_the_value_alone(line: str) -> None:
    assert set(assigned_secrets(line + "\n")) == {PASSWORD}


@pytest.mark.parametrize("line, value", [
    ("DB_PASSWORD=Zq7#Loud#Tiger", "Zq7#Loud#Tiger"),  # no blank before the #: part of the value
    ("DB_PASSWORD=Zq7;Loud;Tiger", "Zq7;Loud;Tiger"),
    ('DB_PASSWORD="Zq7 Loud # Tiger"', "Zq7 Loud # Tiger"),  # inside quotes: the value's own
    ("DB_PASSWORD=correct horse battery", "correct horse battery"),
])
def test_a_hash_or_semicolon_inside_a_value_stays_in_it(line: str, value: str) -> None:
    assert set(assigned_secrets(line + "\n")) == {value}


@pytest.mark.parametrize("line", ['DB_PASSWORD="Zq7-Loud"x-Tiger', 'DB_PASSWORD="Zq7-Loud', "DB_PASSWORD= # set me"])
def test_a_value_quoted_and_then_more_or_unclosed_or_only_a_comment_gives_nothing(line: str) -> None:
    assert assigned_secrets(line + "\n") == []


@pytest.mark.parametrize("line", ["export API_TOKEN=$(cat ~/.config/token.txt)", "PGPASSWORD=$PW psql -h db -U ana",
                                  "DB_PASSWORD=${VAULT_DB_PASSWORD}", "API_TOKEN=`pass show api/token`", "API_TOKEN=$TOKEN"])
def test_a_value_the_shell_makes_is_no_value(line: str) -> None:
    """``export API_TOKEN=$(cat token.txt)`` hid ``$(cat token.txt)`` from every text the model read, and
    ``PGPASSWORD=$PW psql -h db`` the whole command (attacker pass 21's left)."""
    assert assigned_secrets(line + "\n") == []


def test_a_value_that_only_holds_a_dollar_is_still_a_value() -> None:
    assert set(assigned_secrets("DB_PASSWORD=Tr0ub4dor$3x\nAPI_TOKEN=$ecr3t-Pa55!\n")) == {"Tr0ub4dor$3x", "$ecr3t-Pa55!"}
