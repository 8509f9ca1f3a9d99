"""Which ``*_env`` values name an environment variable (:func:`nbagent.providers.endpoints.is_env_name`):
a variable's real name passes, a key pasted in its place (never to be echoed) does not."""

from __future__ import annotations

import pytest

from nbagent.providers.endpoints import is_env_name

AWS_KEY_IDS = ["AKIAIOSFODNN7EXAMPLE", "AKIA2OGYBAH6QZQWXYZ5", "ASIAY34FZKBOKMUTVV7A"]
CAMEL_NAMES = ["Df2023Q4SalesByRegion", "XgbModelV2Fold3Seed7", "GPT4oMiniRunLog2025", "MyOpenAIKey2024Prod",
               "BertBase2LayerFt3x", "AnthropicKey2024Prod", "TrainLoader2024Epochs"]
RANDOM_KEYS = ["a9F3kQ2mZ8pL4tR7vW1xC6bN5dH0jS3e", "X7fK2pQ9mZ4wL8vR3nT6", "Lq4mwluVislX1DR3",
               "9f86d081884c7d659a2feaa0c55ad015", "Zt5QpR8wN2kLm4Xv"]


@pytest.mark.parametrize("key_id", AWS_KEY_IDS)
def test_an_aws_access_key_id_is_not_a_variables_name(key_id: str) -> None:
    # before (fx5): capitals and digits change class seldom: it passed, was kept and echoed as "not set"
    assert not is_env_name(key_id)
    assert not is_env_name(f"{key_id}")


@pytest.mark.parametrize("name", CAMEL_NAMES)
def test_a_camel_case_name_mixing_digits_in_is_a_variables_name(name: str) -> None:
    # before (fx5): judged whole as random text (its classes change often): %config refused it as a key
    assert is_env_name(name)


@pytest.mark.parametrize("key", RANDOM_KEYS)
def test_a_random_key_of_name_characters_is_still_refused(key: str) -> None:
    assert not is_env_name(key)


@pytest.mark.parametrize("name", ["my-gateway-key", "ANTHROPIC-API-KEY", "team.gw.key", "gw-key-8f3a9c2e1b7d"])
def test_a_name_with_a_hyphen_or_a_dot_is_a_variables_name(name: str) -> None:
    # before (fx5): %config refused it while a profile file (~/.nbagent/endpoints.json) took it
    assert is_env_name(name)


@pytest.mark.parametrize("value", ["sk-ant-api03-" + "aB3xQ9kLm2Zp7Rt4Vw8Yc1Nd", "MY KEY", "A=B", "-leading", "x\n"])
def test_what_no_variable_is_named_stays_refused(value: str) -> None:
    assert not is_env_name(value)
