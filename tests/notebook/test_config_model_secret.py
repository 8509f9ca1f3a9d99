"""``%config AgentMagics.model`` refuses a key of any shape nbagent redacts, without showing it."""

from __future__ import annotations

import pytest
from traitlets import TraitError

from nbagent.notebook.settings import checked_model

SECRET = "AbCdEfGh12345678AbCdEfGh123"


@pytest.mark.parametrize("value", ["AIza" + SECRET + "_-AbCdEf", "my gateway glpat-" + SECRET[:20]])
def test_a_key_set_as_the_model_is_refused_without_showing_it(value: str) -> None:
    # before (rev-fx5): taken as the model (spaces inside an id are taken), shown by its notices and %agent config
    with pytest.raises(TraitError) as caught:
        checked_model(value)
    assert SECRET[:16] not in str(caught.value) and "not a model id" in str(caught.value)


def test_a_real_id_is_still_taken() -> None:
    for model in ("claude-sonnet-5-5", "Claude Sonnet EU", "openrouter/anthropic/claude-sonnet-4.5",
                  "arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-sonnet-4-5-v1:0"):
        assert checked_model(model) == model
