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
