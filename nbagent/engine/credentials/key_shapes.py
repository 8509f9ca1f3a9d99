"""Credentials recognised by their shape, whatever variable holds them or none (a key typed into a
cell): :data:`KEY_SHAPES`, the cheap test before its patterns (:func:`may_hold_key`), and
:func:`redact_shapes`, which also takes URL queries' tokens and URLs' passwords out of a text.
"""

from __future__ import annotations

import re

from .query_text import may_hold_query, redact_query_tokens, redact_url_passwords
from .secret_forms import REDACTED

_GITHUB_MARKERS = ("ghp_", "gho_", "ghu_", "ghs_", "ghr_")
_GITHUB_MARKER = re.compile("gh[pousr]_")  # one scan for the five (code is full of "gh": high, right)
_CUT = r"(?=…|\.\.\.|\n\.\.\. \[)"
"""Where a text was cut to size: our ``…``, pandas' ``...`` (a frame's cell wider than its column),
a tool output's ``\n... [N characters omitted] ...\n`` (:func:`~..contracts.tool_api.truncate_middle`)."""
_NOT_A_WORD = "(?=[a-z]*[A-Z0-9])"
"""A cut head of a random key has a capital or a digit (all 8 small letters: one in a thousand), a word
does not: ``hf_transformers…``, ``sk-learnpipelineversions...`` in a frame's cells, a placeholder the
model or a README writes, ``GITHUB_TOKEN=ghp_xxxxxxxxxxxx...``, stay as they are."""
_SHAPES = (  # markers, the shape(s) they start; each searched only where a marker is (most text has none)
    # Each shape also matches its head where a cut ends it (the second alternative): a frame's cell is
    # cut to 40 characters, or to pandas' column width, before the text is redacted, and a head too
    # short for the whole shape sent 34 of a ``ghp_`` token's 36 characters.
    (("sk-",), r"sk-ant-[A-Za-z0-9_\-]{8,}|sk-(?:proj|svcacct|admin)-[A-Za-z0-9_\-]{20,}|sk-[A-Za-z0-9]{40,}"
               rf"|(?<![A-Za-z0-9_])sk-(?:proj|svcacct|admin)-[A-Za-z0-9_\-]{{8,}}{_CUT}"
               rf"|(?<![A-Za-z0-9_])sk-{_NOT_A_WORD}[A-Za-z0-9]{{16,}}{_CUT}"),
    (("earer ",), rf"(?<=[Bb]earer )[A-Za-z0-9._~+/\-]{{12,}}=*|(?<=[Bb]earer )[A-Za-z0-9._~+/\-]{{8,}}{_CUT}"),
    (("hf_",), rf"hf_[A-Za-z0-9]{{30,}}|(?<![A-Za-z0-9_])hf_{_NOT_A_WORD}[A-Za-z0-9]{{8,}}{_CUT}"),
    # A literal first (the regex engine then scans for it in C), the word's start checked behind it.
    (_GITHUB_MARKERS, rf"gh(?<![A-Za-z0-9_]gh)[pousr]_(?:[A-Za-z0-9]{{36,}}|{_NOT_A_WORD}[A-Za-z0-9]{{8,}}{_CUT})"),
    (("github_pat_",), rf"github_pat_(?<![A-Za-z0-9_]github_pat_)(?:[A-Za-z0-9_]{{50,}}|{_NOT_A_WORD}[A-Za-z0-9_]{{8,}}{_CUT})"),
    # The cut head's run is bounded: '-' is in it and starts a word, so an open-ended run was scanned
    # again from every ``xoxb-`` in it (``"xoxb-1234a-" * n``: 10 s on 100 kB, minutes on 1 MB); a
    # head long enough to pass 60 characters has ten after its digits' '-' and is the whole shape.
    (("xox",), rf"xox(?<![A-Za-z0-9_]xox)[abeprs]-(?:[0-9]+-[A-Za-z0-9\-]{{10,}}|[0-9]{{4}}[A-Za-z0-9\-]{{0,60}}{_CUT})"),
    # Not inside base64 (a plot's PNG): a '/' or '+' before it is no word's start there.
    (("AIza",), rf"AIza(?<![A-Za-z0-9_+/\-]AIza)(?:[A-Za-z0-9_\-]{{35}}|{_NOT_A_WORD}[A-Za-z0-9_\-]{{8,34}}{_CUT})"),
    (("k_live_",), rf"(?<![A-Za-z0-9_])[rs]k_live_(?:[A-Za-z0-9]{{20,}}|{_NOT_A_WORD}[A-Za-z0-9]{{8,}}{_CUT})"),
)
_SHAPE_PATTERNS = tuple((markers, re.compile(shape)) for markers, shape in _SHAPES)
_CUT_TAIL = re.compile(rf"(?<={re.escape(REDACTED)}…)[A-Za-z0-9_~+/=\-][A-Za-z0-9._~+/=\-]*"
                       rf"|(?<={re.escape(REDACTED)}\.\.\.)[A-Za-z0-9_~+/=\-][A-Za-z0-9._~+/=\-]*")
"""The tail of a key whose head, cut in the middle, was redacted: ``reprlib`` (a dict's or a list's
repr) keeps a long string's head and tail around its ``...``, and half an OpenAI or fine-grained
GitHub key went on after ``[redacted]...``."""
KEY_SHAPES = re.compile("|".join(shape for _markers, shape in _SHAPES))
"""Credentials recognised by their shape: Anthropic API keys (``sk-ant-…``), OpenAI's (``sk-proj-…``,
``sk-`` and 48 letters and digits), Hugging Face tokens (``hf_…``: ``login(token="hf_…")`` in a
notebook's cell), bearer tokens (``Authorization: Bearer …``, ``curl -H "Authorization: Bearer
…"``), GitHub's (``ghp_``, ``gho_``, ``ghu_``, ``ghs_``, ``ghr_`` and 36 letters and digits;
``github_pat_…``), Slack's (``xoxb-123…-…``), Google API keys (``AIza…``) and Stripe's live keys
(``sk_live_…``, ``rk_live_…``): each with a marker and a length ordinary text does not have."""


def may_hold_key(text: str) -> bool:
    """Whether ``text`` may hold a :data:`KEY_SHAPES` credential (the cheap test before the regex,
    on every string the model is sent: prose, most of it, has no ``_``, and base64 no ``-``)."""
    if "sk-" in text or "earer " in text or "AIza" in text or ("xox" in text and "-" in text):
        return True
    return "_" in text and ("hf_" in text or "_pat_" in text or "k_live_" in text
                            or ("gh" in text and _GITHUB_MARKER.search(text) is not None))


def redact_shapes(text: str) -> str:
    """``text`` with every credential of :data:`KEY_SHAPES` replaced by ``[redacted]``, every URL
    query's token (:func:`~.query_text.redact_query_tokens`: ``?api_key=…`` in an error) and every
    URL's password (:func:`~.query_text.redact_url_passwords`)."""
    if may_hold_query(text):
        text = redact_query_tokens(text)
    text = redact_url_passwords(text)
    if not may_hold_key(text):
        return text
    for markers, pattern in _SHAPE_PATTERNS:
        if any(marker in text for marker in markers):
            text = pattern.sub(REDACTED, text)
    if REDACTED + "…" in text or REDACTED + "..." in text:
        text = _CUT_TAIL.sub(REDACTED, text)
    return text


__all__ = ["KEY_SHAPES", "may_hold_key", "redact_shapes"]
