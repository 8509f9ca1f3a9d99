"""Issue 33: a key set in a cell (``os.environ["ANTHROPIC_API_KEY"] = "sk-ant-…"``) never reaches the
model or the task folder: every channel that carries user text to the model — the prompt, recent
cell inputs (also one cut to size), outputs, the last error, variables' reprs, rules files — is
redacted by value (every ``secret_env`` variable, read at each request) and by shape (``sk-ant-…``
keys and bearer tokens held by no listed variable). The real loop, the real SDK, the simulated API."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterator

import pytest

from nbagent.engine.loop.facts import MAX_INPUT_CHARS, NotebookState, VariableInfo
from nbagent.engine.loop.sanitize import REDACTED, Sanitizer
from nbagent.providers.simulated import SimulatedAPI, text_reply
from tests.engine.loop.test_hostile_input import folder_text
from tests.engine.loop.test_query_support import done_of, make_engine, run

KEY = "sk-ant-api03-" + "Zq7" * 30  # as a user would paste it, set in a cell after the Agent started
TOKEN = "a1b2c3d4e5f6g7h8i9j0k1l2"  # a gateway's bearer token, in no listed variable
CUSTOM = "custom-gateway-secret-98765"  # a value listed in secret_env


def sent_text(api: SimulatedAPI) -> str:
    return "\n".join(json.dumps(r.body) for r in api.requests)


async def test_a_key_set_in_a_cell_reaches_neither_the_model_nor_the_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    api = SimulatedAPI(lambda body: text_reply("ok"))
    long_cell = "x = 1\n" * (MAX_INPUT_CHARS // 6 - 3) + f'os.environ["ANTHROPIC_API_KEY"] = "{KEY}"'
    state = NotebookState(
        variables=[VariableInfo("key", "str", repr(KEY)), VariableInfo("headers", "dict",
                                                                      f"{{'Authorization': 'Bearer {TOKEN}'}}")],
        inputs=[f'os.environ["ANTHROPIC_API_KEY"] = "{KEY}"', long_cell, f"os.environ['GW'] = '{CUSTOM}'"],
        last_error=f"AuthenticationError: invalid x-api-key {KEY}",
        outputs=[f"Out[3]: '{KEY}'", f"Out[4]: {CUSTOM}"])
    (tmp_path / "AGENTS.md").write_text(f"Use the key {KEY} for the gateway.\n")
    engine = make_engine(api, tmp_path, kernel_facts=lambda: state, secret_env=("ANTHROPIC_API_KEY", "GW"))
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)  # what the cell did
    monkeypatch.setenv("GW", CUSTOM)

    ev = await run(engine, f"why does curl -H 'Authorization: Bearer {TOKEN}' fail with {KEY}?")

    assert done_of(ev).reason == "end_turn"
    sent = sent_text(api)
    assert "kernel-state" in sent and REDACTED in sent
    for secret in (KEY, KEY[:40], TOKEN, CUSTOM):  # KEY[:40]: the cut cell kept no piece of it either
        assert secret not in sent
        assert secret not in folder_text(tmp_path / "task")  # api_conversation_history.json and the rest
        assert secret not in json.dumps(engine.session.history)


def test_shapes_are_redacted_without_any_configured_secret() -> None:
    clean = Sanitizer()
    assert clean.redact(f"k={KEY} h=Bearer {TOKEN} end") == f"k={REDACTED} h=Bearer {REDACTED} end"
    value, _ = clean.value({"a": [f"x {KEY}"], f"Bearer {TOKEN}": 1})
    assert value == {"a": [f"x {REDACTED}"], f"Bearer {REDACTED}": 1}
    assert clean.redact("sk-ant- is a prefix; a bearer token is sent as Bearer <token>") == \
        "sk-ant- is a prefix; a bearer token is sent as Bearer <token>"


def test_strings_keeps_the_structure_of_what_it_redacts() -> None:
    state = NotebookState([VariableInfo("k", "str", KEY)], (KEY,), KEY, [KEY])
    out = Sanitizer().strings(state)
    assert isinstance(out, NotebookState) and isinstance(out.variables[0], VariableInfo)
    assert out == NotebookState([VariableInfo("k", "str", REDACTED)], (REDACTED,), REDACTED, [REDACTED])


def shown_when_streamed(sanitizer: Sanitizer, text: str, seed: int, splits: int = 300) -> Iterator[str]:
    """What the view shows of ``text`` streamed in deltas cut at random places, once per splitting."""
    import random

    from nbagent.engine.loop.sanitize import StreamRedactor

    rng = random.Random(seed)
    for _ in range(splits):
        cuts = sorted(rng.sample(range(1, len(text)), rng.randint(1, 12)))
        redactor, out = StreamRedactor(sanitizer), []
        for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True):
            out.append(redactor.feed(0, text[a:b]))
        yield "".join(out) + redactor.flush(0)


def test_a_key_known_by_its_shape_split_anywhere_in_a_stream_never_shows() -> None:
    sanitizer = Sanitizer(secrets=(CUSTOM,))
    text = f"use {KEY} with Bearer {TOKEN} and {CUSTOM}, then sk-ant- alone"
    for shown in shown_when_streamed(sanitizer, text, seed=3):
        assert shown == sanitizer.redact(text) == \
            f"use {REDACTED} with Bearer {REDACTED} and {REDACTED}, then sk-ant- alone"


OPENAI = "sk-proj-" + "Ab3_x-9Q" * 20  # as OpenAI's dashboard shows a project key
OPENAI_OLD = "sk-" + "T3BlbkFJ" * 6  # the older form: sk- and 48 letters and digits
HF = "hf_" + "QwErTyUiOp" * 3 + "AsDf"  # login(token="hf_…"), the commonest secret of a data notebook


def test_openai_keys_and_hugging_face_tokens_typed_into_a_cell_are_known_by_their_shape() -> None:
    """A cell's ``OpenAI(api_key="sk-proj-…")`` or ``login(token="hf_…")`` is not a variable named
    as a credential: the cell's text went to the model whole (attacker pass 11)."""
    clean = Sanitizer()
    cell = f'client = OpenAI(api_key="{OPENAI}")\nold = "{OPENAI_OLD}"\nhuggingface_hub.login(token="{HF}")'
    assert clean.redact(cell) == \
        f'client = OpenAI(api_key="{REDACTED}")\nold = "{REDACTED}"\nhuggingface_hub.login(token="{REDACTED}")'
    prose = ("a risk-based task-list for sk-learn, the hf_hub cache of model hf_bert_base_uncased, "
             "the desk-top sk-1234 and sk-ant- alone")
    assert clean.redact(prose) == prose


def test_an_openai_key_split_anywhere_in_a_stream_never_shows() -> None:
    text = f"set api_key={OPENAI}; then token {HF} and the task-list"
    for shown in shown_when_streamed(Sanitizer(), text, seed=5):
        assert shown == f"set api_key={REDACTED}; then token {REDACTED} and the task-list"


GITHUB = "ghp_" + "R8xK2mQ9vL4tN7pB3wZ6" + "yC1dF5hJ0sA2Xy90"  # a classic personal access token: 36 after ghp_
GITHUB_FINE = "github_pat_11AB3CDEF0" + "aZ9_" * 15  # a fine-grained one
SLACK = "xoxb-2489146723-5512938471234-" + "kQ7rT2vX9mN4pL8s"
GOOGLE = "AIza" + "SyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY"
STRIPE = "sk_live_" + "51Hx8TqLyjWDarjtT1zdp7dc"


def test_github_slack_google_and_stripe_tokens_held_by_an_ordinary_name_are_known_by_their_shape() -> None:
    """``tok = "ghp_…"`` in a cell: no credential name, and before this the cell went to the model whole
    (a limit the thirteenth attacker's pass left)."""
    clean = Sanitizer()
    for token in (GITHUB, GITHUB_FINE, SLACK, GOOGLE, STRIPE):
        assert clean.redact(f'tok = "{token}"\nrequests.get(url, auth=("me", tok))') == \
            f'tok = "{REDACTED}"\nrequests.get(url, auth=("me", tok))', token
    prose = ("though the light was high, my_ghp_notes and the_ghost_value; xoxo, the AIza team, sk_live_demo, "
             "github_pat_short and ghp_ alone")
    assert clean.redact(prose) == prose


def test_a_github_or_slack_token_split_anywhere_in_a_stream_never_shows() -> None:
    text = f"use {GITHUB} then {SLACK}, not {GITHUB_FINE}."
    for shown in shown_when_streamed(Sanitizer(), text, seed=7):
        assert shown == f"use {REDACTED} then {REDACTED}, not {REDACTED}."
