"""A configured secret is redacted in the forms formatting gives it (repr, JSON, URL quoting) and
where a display or a tool cut it short with or without a marker (F4, F5 of the third review)."""

from __future__ import annotations

import json
import reprlib
from pathlib import Path
from typing import cast
from urllib.parse import quote, quote_plus

from nbagent.engine.contracts.events import CallPreview
from nbagent.engine.contracts.tool_api import ToolContext, ToolLike, ToolOutput, truncate_middle
from nbagent.engine.credentials.secret_forms import forms_of, secret_forms
from nbagent.engine.loop.sanitize import REDACTED, Sanitizer, StreamRedactor
from nbagent.engine.loop.tool_runner import _describer, _sanitized

PASSWORD = "S3cure\\Pa55'word\"2026"  # a backslash and both quote kinds
URL_PASSWORD = "p@ss:w0rd/2026#x"
TOKEN = "gw_live_4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c"  # 40 characters, no sk-ant- shape


def test_a_secret_is_redacted_in_its_repr_in_a_string_a_dict_and_a_dsn() -> None:
    s = Sanitizer((PASSWORD,))
    for value in (PASSWORD, {"password": PASSWORD}, [f"postgresql://etl:{PASSWORD}@db/prod"]):
        out = s.redact(repr(value))
        assert "S3cure" not in out and REDACTED in out, out
    # A value with one quote kind only: repr() picks the other quote style, which is a form too.
    for one_quote in ("S3cure\\Pa55'word2026", 'S3cure\\Pa55"word2026'):
        out = Sanitizer((one_quote,)).redact(repr([one_quote]))
        assert "S3cure" not in out and REDACTED in out, out


def test_a_secret_is_redacted_json_escaped_and_url_quoted() -> None:
    s = Sanitizer((PASSWORD, URL_PASSWORD, "pässwört-ünïcode\\x"))
    shown = [json.dumps({"pw": PASSWORD}), json.dumps("pässwört-ünïcode\\x"),
             json.dumps("pässwört-ünïcode\\x", ensure_ascii=False),
             f"postgresql://etl:{quote(URL_PASSWORD, safe='')}@db/prod", f"u={quote(URL_PASSWORD)}",
             f"u={quote_plus(URL_PASSWORD)}", quote_plus(PASSWORD)]
    for text in shown:
        assert REDACTED in s.redact(text), text
        assert "p%40ss" not in s.redact(text) and "S3cure" not in s.redact(text)


def test_forms_are_only_those_that_differ_and_are_made_once_per_secret_set() -> None:
    # Nothing to escape or quote: the value, then its base64 at the three offsets (no '+' or '/'
    # in them here, so the URL-safe alphabet adds none).
    assert secret_forms(TOKEN)[0] == TOKEN and len(secret_forms(TOKEN)) == 4
    assert len(secret_forms(PASSWORD)) > 1
    assert Sanitizer((PASSWORD, TOKEN)).forms is Sanitizer((PASSWORD, TOKEN)).forms
    assert [len(f.text) for f in forms_of((PASSWORD, TOKEN))] == sorted(
        (len(f.text) for f in forms_of((PASSWORD, TOKEN))), reverse=True)


def test_an_escaped_secret_split_across_streamed_deltas_is_never_shown_in_pieces() -> None:
    s = Sanitizer((PASSWORD,))
    text = f'{{"code": {json.dumps("x = " + repr(PASSWORD))}}} and some more words after it'
    for step in (1, 3, 7):
        redactor, out = StreamRedactor(s), []
        for at in range(0, len(text), step):
            out.append(redactor.feed(0, text[at:at + step]))
            assert "Pa55" not in "".join(out)
        assert "".join(out) + redactor.flush(0) == s.redact(text)


def test_a_head_cut_by_truncate_middle_and_its_tail_after_the_marker_are_redacted() -> None:
    s = Sanitizer((TOKEN,))
    probe = truncate_middle("A" * 8000, 2000)
    head_len, tail_len = probe.index("\n"), len(probe) - probe.rindex("\n") - 1
    for keep in (16, 30, 38):
        cut = truncate_middle("x" * (head_len - keep) + TOKEN + "y" * 8000, 2000)
        assert TOKEN[:keep] + "\n... [" in cut
        assert TOKEN[:keep] not in s.redact(cut) and f"{REDACTED}\n... [" in s.redact(cut)
        cut = truncate_middle("x" * 8000 + TOKEN + "y" * (tail_len - keep), 2000)
        assert "...\n" + TOKEN[-keep:] in cut
        assert TOKEN[-keep:] not in s.redact(cut) and f"...\n{REDACTED}" in s.redact(cut)
    text = f"{TOKEN[:20]} goes on and {TOKEN[-20:]} too"  # no cut: not this rule's
    assert s.redact(text) == text


def test_a_head_that_ends_a_cut_field_is_redacted_but_not_one_that_goes_on() -> None:
    s = Sanitizer((TOKEN,))
    cut = ("Client config: " + "x" * 50 + TOKEN)[:90]  # 25 characters of the token
    assert s.strings(("summary", cut)) == ("summary", cut[:65] + REDACTED)
    assert s.redact(f"{TOKEN[:30]} goes on") == f"{TOKEN[:30]} goes on"
    assert s.redact(f"short: {TOKEN[:10]}") == f"short: {TOKEN[:10]}"  # too little to tell from text


def test_a_streamed_head_is_held_until_it_goes_on_or_the_block_ends() -> None:
    s = Sanitizer((TOKEN,))
    redactor = StreamRedactor(s)
    shown = redactor.feed(0, "see " + TOKEN[:30]) + redactor.feed(0, TOKEN[30:] + " done")
    assert shown + redactor.flush(0) == f"see {REDACTED} done"  # whole, not a head and a tail
    redactor = StreamRedactor(s)
    assert redactor.feed(0, "ends with " + TOKEN[:30]) + redactor.flush(0) == f"ends with {REDACTED}"


def _straddling(limit: int, before_cut: int) -> str:
    """A long line whose token has ``before_cut`` characters before :func:`truncate_middle`'s cut."""
    head_len = truncate_middle("A" * 6000, limit).index("\n")
    return "x" * (head_len - before_cut) + TOKEN + "y" * 5000


def test_a_tool_output_is_redacted_before_it_is_cut() -> None:
    line = _straddling(2000, 10)  # fewer than a cut head's 16: only redacting first hides them
    out, _ = _sanitized(ToolOutput(content=line, display=line), Sanitizer((TOKEN,)), 2000)
    assert isinstance(out.content, str) and out.display is not None
    for text in (out.content, out.display):
        assert TOKEN[:10] not in text and REDACTED in text


async def test_a_call_preview_is_redacted_before_it_is_cut() -> None:
    class Previewing:
        async def preview(self, tool_input: object, ctx: object) -> CallPreview:
            return CallPreview(summary="edit", before=_straddling(500, 10), after="x")

    describe = _describer(cast(ToolLike, Previewing()), lambda: ToolContext(cwd=Path(".")),
                          Sanitizer((TOKEN,)), 500)
    shown = await describe({})
    assert shown is not None and shown.before is not None
    assert TOKEN[:10] not in shown.before and REDACTED in shown.before


def test_a_secret_cut_by_reprlib_or_the_output_capture_is_redacted_on_both_sides() -> None:
    from nbagent.tools.capture import BoundedText

    s = Sanitizer((TOKEN,))
    bounded = reprlib.Repr()
    bounded.maxstring = 80  # what the kernel facts show of a string in a container
    for value in ("x" * 10 + TOKEN + "y" * 90, "x" * 90 + TOKEN + "y" * 10):
        shown = bounded.repr([value])
        assert "..." in shown and s.redact(shown).count(REDACTED) == 1, shown
        assert not any(TOKEN[i:i + 16] in s.redact(shown) for i in range(len(TOKEN) - 15))
    for before in (16, 30):  # the capture keeps the head and the tail of a long output
        capture = BoundedText(500)
        capture.write("x" * (210 - before) + TOKEN + "y" * 1000 + TOKEN + "z" * (210 - 40 + before))
        shown = capture.getvalue()
        assert "not captured" in shown and not any(TOKEN[i:i + 16] in s.redact(shown) for i in range(25))


def test_a_secret_is_redacted_in_base64_as_http_basic_auth_and_docker_configs_carry_it() -> None:
    """``Authorization: Basic base64("user:password")`` (a request's headers printed, an error
    echoing them, a variable the kernel facts describe) carried the password encoded: no form
    matched it. Every offset of the secret in what is encoded, both base64 alphabets."""
    import base64

    s = Sanitizer((TOKEN, URL_PASSWORD))
    for user in ("", "a", "al", "alice", "etl-user"):
        for secret in (TOKEN, URL_PASSWORD):
            raw = f"{user}:{secret}".encode()
            for encoded in (base64.b64encode(raw).decode(), base64.urlsafe_b64encode(raw).decode()):
                headers = repr({"Authorization": f"Basic {encoded}"})
                out = s.redact(headers)
                assert REDACTED in out, (user, secret, out)
                # what is left of the encoding: the user name's, the group it shares, the last group
                left = out.split("Basic ")[1].replace(REDACTED, "").rstrip("'}=")
                assert len(left) <= len(base64.b64encode(f"{user}:".encode()).decode()) + 8, out
    streamed = StreamRedactor(s)
    text = "auth: " + base64.b64encode(f"etl:{TOKEN}".encode()).decode() + " done"
    shown = "".join(streamed.feed(0, text[i:i + 5]) for i in range(0, len(text), 5)) + streamed.flush(0)
    assert REDACTED in shown and shown.endswith(" done")
    assert s.redact("a basic understanding of 12345678 QUJDREVGR0g=") == "a basic understanding of 12345678 QUJDREVGR0g="
