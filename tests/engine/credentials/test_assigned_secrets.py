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


@pytest.mark.parametrize("text", [
    "SECRET_NAME=db-credentials", "TOKEN_LIMIT=409600", "$ TOKEN_LIMIT=409600 python run.py",
    "API_KEY_ID=AKIAEXAMPLE123", "PASSWORD_MIN_LENGTH=123456", "TOKEN_TYPE=Bearer-JWT",
    "DB_PASSWORD=********", 'password = "********"', "password: ••••••••", "mysql -u ana -p******** sales",
    '{"db_password": "DB Password"}',
])
def test_a_setting_about_a_credential_or_a_masked_one_reaches_the_model(text: str) -> None:
    """``SECRET_NAME=db-credentials`` (an AWS secret's name), ``TOKEN_LIMIT=409600`` and a password
    printed masked were hidden from every text the model read, as if each were the credential."""
    from nbagent.engine.credentials.output_secrets import output_secrets
    assert output_secrets(text + "\n") == ()


@pytest.mark.parametrize("text, value", [
    ("SLACK_WEBHOOK_URL=https://hooks.slack.com/services/T0/B0/abcdefgh", "https://hooks.slack.com/services/T0/B0/abcdefgh"),
    ("SECRET_KEY_BASE=abcdef0123456789abcdef", "abcdef0123456789abcdef"),
    ("SECRET_URL=https://hooks.example.com/services/T0/B0/abcdefgh", "https://hooks.example.com/services/T0/B0/abcdefgh"),
    ("DB_PASSWORD_PROD=hunter2hunter", "hunter2hunter"),
    ("$ PGPASSWORD=x********y psql", "x********y"),
])
def test_a_credential_named_so_is_still_hidden_whatever_its_last_word(text: str, value: str) -> None:
    from nbagent.engine.credentials.output_secrets import output_secrets
    assert output_secrets(text + "\n") == (value,)


def test_a_variable_about_a_secret_is_shown_and_one_holding_it_is_not() -> None:
    from nbagent.engine.credentials.named_values import named_secret
    assert not named_secret("secret_name", "db-credentials") and not named_secret("password_type", "one-time-pad")
    assert named_secret("secret_url", "https://hooks.example.com/T0/B0/abcdefgh") and named_secret("db_password", "hunter2hunter")


@pytest.mark.parametrize("text", ["VAULT_SECRET_ID=6f0c2a9e-1b7d-4c3e-9a55-2d8e7b1f4c90",
                                  "export SECRET_ID=6f0c2a9e-1b7d-4c3e-9a55-2d8e7b1f4c90",
                                  "secret_id: 6f0c2a9e-1b7d-4c3e-9a55-2d8e7b1f4c90"])
def test_a_vault_secret_id_is_the_credential_not_an_id_of_one(text: str) -> None:
    """HashiCorp Vault's AppRole ``secret_id`` logs in (with the role's id): once a name ending in ``_ID``
    was taken for a name about a credential, a printed ``VAULT_SECRET_ID=…`` reached the model whole."""
    from nbagent.engine.credentials.named_values import named_secret
    from nbagent.engine.credentials.output_secrets import output_secrets
    assert output_secrets(text + "\n") == ("6f0c2a9e-1b7d-4c3e-9a55-2d8e7b1f4c90",)
    assert named_secret("vault_secret_id", "6f0c2a9e-1b7d-4c3e-9a55-2d8e7b1f4c90")
    assert output_secrets("API_KEY_ID=AKIAEXAMPLE123\nSECRET_NAME=db-credentials\n") == ()
