"""A key known by its shape (a GitHub, Stripe, Hugging Face token) in a frame's cells is cut to 40
characters among the column's values, and to pandas' column width in the sample rows, before the
text is redacted: the cut head was too short for the shape's length, so 34 of a ``ghp_`` token's 36
characters reached the model. A run of key characters after a marker that ends at a cut (``…``,
pandas' ``...``) is redacted as the key it is the head of."""

from __future__ import annotations

import pandas as pd

from nbagent.engine.credentials.key_shapes import redact_shapes
from nbagent.engine.loop.sanitize import REDACTED, Sanitizer
from tests.notebook.kernel_context.support import context_text, shell_with

TOKENS = {
    "github": "ghp_R8x2Lq9ZtVb3Nw7YpK4mHc6Jd1Fs5Ge0Ua2Q",
    "github_pat": "github_pat_11ABCDEFG0" + "a1B2c3D4e5" * 7 + "Xy",
    "stripe": "sk_live_51HqLyjWDarjtT1zdp7dcXeJ3kL9mN2pQ",
    "huggingface": "hf_" + "aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3h",
    "openai": "sk-proj-" + "Ab3dEf6hIj9kLm2nOp5qRs8t" * 3,
    "google": "AIza" + "Sy" + "D3f6H9k2M5p8S1v4Y7b0E3h6K9n2Q5t8",
}


def test_a_frame_of_keys_sends_no_head_of_any_of_them() -> None:
    keys = pd.DataFrame({"service": list(TOKENS), "key": list(TOKENS.values())})
    text, _ = context_text(shell_with(keys=keys), "which services are in `keys`?")
    sent = Sanitizer(()).strings(text)
    assert "service: str" in sent or "service: object" in sent
    for name, token in TOKENS.items():
        assert token[:16] not in sent, name


def test_a_key_shape_cut_at_a_marker_is_redacted_and_ordinary_cut_text_is_not() -> None:
    assert redact_shapes("'ghp_R8x2Lq9ZtVb3Nw7YpK4mHc6Jd1Fs5Ge0Ua…") == f"'{REDACTED}…"
    assert redact_shapes("gh  ghp_R8x2Lq9ZtVb3Nw7YpK4mHc6Jd1Fs5Ge0...") == f"gh  {REDACTED}..."
    assert redact_shapes("sk_live_51HqLyjWDarjt…") == f"{REDACTED}…"
    for plain in ("my_ghp_notes_about_things…", "sk_live_demo…", "ghp_x…", "the ghp_ prefix..."):
        assert redact_shapes(plain) == plain


def test_the_cut_forms_stay_linear_on_a_long_run_of_key_characters() -> None:
    # A head that may end at a cut is scanned once per marker: a run of 200,000 digits after
    # ``xoxb-`` with no cut is given up in one pass (two open-ended runs back to back took minutes).
    import time

    started = time.perf_counter()
    for text in ("xoxb-" + "1" * 200_000, "ghp_" + "a" * 200_000 + "-", "sk_live_" + "a" * 200_000 + "-"):
        redact_shapes(text)
    assert time.perf_counter() - started < 2.0


def test_a_dict_of_keys_cut_in_the_middle_sends_neither_the_head_nor_the_tail() -> None:
    # reprlib keeps a long string's head and tail around '...': the head was redacted, and half of an
    # OpenAI or fine-grained GitHub key still went on after it.
    keys = {name: token for name, token in TOKENS.items() if len(token) > 60}
    text, _ = context_text(shell_with(creds=keys), "which services are in `creds`?")
    sent = Sanitizer(()).strings(text)
    assert "creds: dict" in sent
    for name, token in keys.items():
        for i in range(len(token) - 12):
            assert token[i:i + 12] not in sent, (name, i)


def test_a_key_shape_cut_by_a_tool_outputs_middle_marker_is_redacted() -> None:
    from nbagent.engine.contracts.tool_api import truncate_middle

    text = "x" * 999 + " " + TOKENS["github"] + "y" * 3_000
    shown = truncate_middle(text, 2_040 + len(f"\n... [{len(text):,} characters omitted] ...\n"))
    assert "ghp_R8x2Lq9Z" in shown and TOKENS["github"] not in shown  # the cut is in the key
    assert "ghp_R8x2" not in redact_shapes(shown)


def test_a_slack_shape_cut_head_stays_linear_on_many_word_starts() -> None:
    # '-' is a key character and starts a word: an open-ended run after each ``xoxb-`` was scanned
    # again from each of them (10 s on these 110 kB; now about 10 ms).
    import time

    started = time.perf_counter()
    text = "xoxb-1234a-" * 10_000
    assert redact_shapes(text + " xoxb-1234…") == text + f" {REDACTED}…"  # no cut, no key: all kept
    assert time.perf_counter() - started < 2.0


def test_a_word_after_a_hugging_face_or_openai_marker_cut_at_a_marker_is_kept() -> None:
    # A cut head of a random key has a capital or a digit; a model's or a package's name does not.
    for plain in ("hf_transformers…", "model hf_distilbertbase...", "sk-learnpipelineversions...", "xhf_Ab3dE6gH9…"):
        assert redact_shapes(plain) == plain
    assert redact_shapes("hf_aB3dE6gH9jK…") == f"{REDACTED}…"
    assert redact_shapes("sk-Ab3dEf6hIj9kLm2nOp…") == f"{REDACTED}…"


def test_a_placeholder_after_a_github_stripe_or_google_marker_cut_at_a_marker_is_kept() -> None:
    # The model explaining a setting, or a README's example: its answer read "[redacted]...".
    for plain in ("Set GITHUB_TOKEN=ghp_xxxxxxxxxxxx... in .env", "STRIPE_KEY=sk_live_xxxxxxxxxxxxxxxx…",
                  "key=AIzaxxxxxxxxxxxx...", "github_pat_example_token..."):
        assert redact_shapes(plain) == plain
    for token in TOKENS.values():
        assert REDACTED in redact_shapes(f" {token[:24]}...")
