"""A session's model id: an empty one fails when the session is made, naming the setting, not as
the API's 400 ("model: Field required") after the request was sent."""

from __future__ import annotations

import pytest

from nbagent.engine.contracts.config import SessionConfig


@pytest.mark.parametrize("model", ["", "   "])
def test_an_empty_model_id_is_refused_naming_the_setting(model: str) -> None:
    with pytest.raises(ValueError, match="model must be a model id such as 'claude-sonnet-5-5'"):
        SessionConfig(model=model)


def test_an_unknown_model_id_is_still_taken() -> None:
    # Unknown ids are a gateway's or a new model's: only their prices are unknown (docs/models.md).
    assert SessionConfig(model="claude-nonsense-9").model == "claude-nonsense-9"


@pytest.mark.parametrize("model", ["claude-sonnet-5-5\n", " claude-sonnet-5-5", "claude-sonnet-5-5\t"])
def test_a_model_id_with_space_or_a_line_break_around_it_is_refused_naming_the_clean_id(model: str) -> None:
    """``%config AgentMagics.model = open("model.txt").read()`` (its line break): taken, and each
    prompt's request failed at the API (404) naming no setting (review of newcomer pass 25)."""
    with pytest.raises(ValueError, match="has spaces or a line break around it: use 'claude-sonnet-5-5'"):
        SessionConfig(model=model)


@pytest.mark.parametrize("model", ["no such model!", "'claude-sonnet-5-5'", "gpt-4o,claude", "$MODEL", "<model-id>",
                                   "x" * 513, "claude\tsonnet", "Claude Sonnet\nEU", 'say "hi"', "a\x00b", "a\x1bb"])
def test_a_model_id_no_provider_could_have_is_refused_saying_what_ids_are_made_of(model: str) -> None:
    """``%config AgentMagics.model = 'no such model!'`` was taken; every prompt then failed at the
    API (or a gateway) naming no setting. Now it fails at once, saying what an id is made of."""
    with pytest.raises(ValueError, match="cannot be a model id: it (has|is over 512).*Model ids are letters, digits"):
        SessionConfig(model=model)


@pytest.mark.parametrize("model", [
    "claude-sonnet-4-5-20250929", "claude-3-5-haiku-latest",
    "anthropic.claude-3-5-sonnet-20240620-v1:0", "us.anthropic.claude-sonnet-4-20250514-v1:0",
    "arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-3-7-sonnet-20250219-v1:0",
    "claude-3-5-sonnet-v2@20241022", "claude-opus-4@20250514",
    "openrouter/anthropic/claude-3.5-sonnet", "bedrock/anthropic.claude-3-haiku-20240307-v1:0",
    "meta-llama/Llama-3.1-8B-Instruct", "llama3.1:8b", "qwen2.5-coder:7b-instruct-q4_K_M",
    "openrouter/meta-llama/llama-3.1-8b-instruct:free", "ft:gpt-4o-mini:org::abc123", "my_local_model",
    "/models/llama-3.gguf", "~/models/mistral+lora.gguf", "modèle-local", "simulated"])
def test_every_real_model_id_form_is_still_taken(model: str) -> None:
    assert SessionConfig(model=model).model == model


@pytest.mark.parametrize("model", [
    "/home/me/My Models/qwen2.5-7b.gguf", "C:\\models\\qwen.gguf", "C:\\Users\\Me\\My Models\\q.gguf",
    "accounts/fireworks/models/llama-v3p1-8b-instruct#accounts/me/deployments/abc123"])
def test_a_served_path_or_a_deployment_id_is_taken(model: str) -> None:
    """llama.cpp's and vLLM's served model name is the model's path as given (a Windows path, a folder
    with a space), and a Fireworks deployment is ``…#accounts/…/deployments/…``: each was refused as
    "cannot be a model id", with no setting to get past it, while a sentence without a path still is."""
    assert SessionConfig(model=model).model == model


@pytest.mark.parametrize("model", [
    "Claude Sonnet EU", "claude-sonnet-4-5[1m]",
    "arn%3Aaws%3Abedrock%3Aus-east-1%3A123456789012%3Ainference-profile%2Fus.anthropic.claude-3-7-sonnet-20250219-v1%3A0"])
def test_a_gateway_alias_an_encoded_arn_and_a_context_variant_are_taken(model: str) -> None:
    """A LiteLLM or local server's alias with spaces, a URL-encoded Bedrock ARN and Claude Code's
    ``[1m]`` variant are real ids: each was refused as "cannot be a model id" (fx5)."""
    assert SessionConfig(model=model).model == model


KEY = "sk-ant-api03-" + "AbCdEfGh12345678" * 5


@pytest.mark.parametrize("model", [KEY, KEY + "\n", "ANTHROPIC_API_KEY=" + KEY, "token=" + "Zx9" * 20 + "=="])
def test_a_secret_given_as_the_model_is_refused_without_showing_it(model: str) -> None:
    """``Agent(model=os.environ["ANTHROPIC_API_KEY"])``, a line of a ``.env`` file: the key was taken
    as the model (sent to the endpoint in every request body), or the refusal printed it whole into the
    cell's saved output."""
    with pytest.raises(ValueError) as caught:
        SessionConfig(model=model)
    said = str(caught.value)
    assert "AbCdEfGh12345678" not in said and "Zx9Zx9Zx9" not in said, said
    assert "API key, not a model id" in said or "characters)" in said, said


@pytest.mark.parametrize("model", ["Bearer " + KEY, "x-api-key sk-proj-" + "AbCdEfGh12345678" * 3,
                                   "token ghp_" + "AbCdEfGh12345678" * 2, "hf_" + "AbCdEfGh12345678" * 2,
                                   "AKIAIOSFODNN7EXAMPLE AbCdEfGh12345678AbCdEfGh12345678",
                                   "Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.AbCdEfGh12345678"])
def test_a_header_or_token_pasted_as_the_model_is_refused_without_showing_it(model: str) -> None:
    """Spaces are taken inside an id (a gateway's alias): a pasted ``Bearer sk-ant-…`` header passed,
    and the unpriced-model notice and ``%agent config`` showed the key in the saved notebook (rev-fx5)."""
    with pytest.raises(ValueError) as caught:
        SessionConfig(model=model)
    assert "AbCdEfGh12345678" not in str(caught.value) and "API key, not a model id" in str(caught.value)


@pytest.mark.parametrize("model", ["gpt-4o (EU)", "Token Saver", "Basic Chat EU", "hf_llama", "Bearer"])
def test_an_alias_with_parentheses_or_an_auth_word_is_still_a_model_id(model: str) -> None:
    assert SessionConfig(model=model).model == model
