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


KEYS_WITH_HYPHENS_OR_HEX = ["glpat-MuhplVdtxcvo_zVPIVRf", "glpat-102x3LFY7QxZiz-EQ0bs",  # GitLab tokens
                            "key-485dbcfdaeb33f4bfa24dcf6618014ab",  # Mailgun
                            "beaf1b192695c8811de5727159adc075",  # Azure OpenAI (32 hex digits)
                            "SK375dfab68893ee581ee146e16129deaa"]  # Twilio API key


@pytest.mark.parametrize("key", KEYS_WITH_HYPHENS_OR_HEX)
def test_a_key_split_by_hyphens_or_all_hex_is_not_a_variables_name(key: str) -> None:
    # before (rev-fx5): '-' let a key's short random parts pass one by one; a hex key passed one time in twenty
    assert not is_env_name(key)


@pytest.mark.parametrize("name", ["azure-eastus2-key", "team-a.llm-key", "gpt-4o-key", "MyGateway-key", "azureOpenAI-key",
                                  "myKey-prod", "gw.apiKey", "litellm-masterKey", "myLLMKey-prod", "openaiKey.v2",
                                  "llm.gw.token-2025", "OPENAI_KEY_PROJECT_3F9A2C71", "key-prod-8f3a9c2e1b7d"])
def test_real_names_with_hyphens_ids_and_versions_still_pass(name: str) -> None:
    assert is_env_name(name)
