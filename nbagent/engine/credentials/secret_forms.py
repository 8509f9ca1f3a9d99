"""How a secret's value may appear in text, and how a cut piece of it is found.

A value is seldom shown only as it is: ``repr()`` escapes a backslash and a quote (the kernel
facts describe every variable by its repr), JSON escapes them too (a tool's JSON result, the
model's tool input), and a URL quotes ``@``, ``:`` or ``/`` (a database DSN must). Each such form
is redacted like the value itself (:func:`secret_forms`; a value with nothing to escape or quote
has one form, so redacting it costs what it did before), so a password with a ``\\`` or a ``'``
is no easier to leak than one without.

A display may also cut a value short: a DataFrame's ``…``, pandas' ``...``, :func:`truncate_middle`'s
``\\n... [N characters omitted] ...\\n``, or a field cut with no marker at all (``text[:4000]``).
The head of a form before such a cut, at the very end of a field, and its tail right after a
marker are redacted too once they are long enough (:func:`cut_head`) to be told from ordinary text
(:func:`redact_cut`, :func:`redact_end`, :func:`redact_cut_tail`).
"""

from __future__ import annotations

import base64
import html
import json
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import quote, quote_plus

REDACTED = "[redacted]"
CUT_MARKERS = ("…", "...", "\n... [")
"""What may follow a value's head where a display cut it (the last is :func:`truncate_middle`'s)."""
TAIL_MARKERS = ("…", "...")
"""What may come right before a value's tail where a display cut its start (``...\\n`` ends
:func:`truncate_middle`'s marker: the newline is allowed for after these)."""
MARKER_HOLD = len(CUT_MARKERS[-1]) - 1
"""How much of a cut marker may arrive after a head in the next streamed delta."""


def _escaped(secret: str, quote_char: str) -> str:
    """The inside of ``repr(secret)`` as Python writes it in ``quote_char`` quotes."""
    return "".join("\\" + ch if ch == quote_char else repr(ch)[1:-1] for ch in secret)


def secret_forms(secret: str) -> tuple[str, ...]:
    """``secret`` first, then each form other formatting gives it where that differs from it:
    ``repr()``'s escaping in either quote style, JSON's (``\\uXXXX`` or not), a repr inside JSON
    (code quoting the value in a tool's input), URL quoting (``quote`` with its default
    ``safe='/'`` and with ``safe=''``, ``quote_plus``), HTML's escaping (a table's ``&amp;``) and
    base64 (:func:`_base64_forms`)."""
    reprs = (_escaped(secret, "'"), _escaped(secret, '"'))
    forms = (secret, *reprs, json.dumps(secret)[1:-1], json.dumps(secret, ensure_ascii=False)[1:-1],
             *(json.dumps(r)[1:-1] for r in reprs), quote(secret), quote(secret, safe=""), quote_plus(secret),
             html.escape(secret), html.escape(secret, quote=False), *_base64_forms(secret))
    return tuple(dict.fromkeys(forms))  # no form twice, the value first


def _base64_forms(secret: str) -> tuple[str, ...]:
    """The base64 text that encodes ``secret`` wherever it sits in what is encoded: HTTP Basic
    auth (``Authorization: Basic base64("user:password")``), a ``.dockerconfigjson``'s ``auth``,
    a Kubernetes secret. Its bytes start at any offset modulo 3, so for each the characters that
    depend on the secret's bytes alone (whole 4-character groups), standard and URL-safe alphabets."""
    data, forms = secret.encode("utf-8", "surrogatepass"), []
    for offset in range(3):
        encoded = base64.b64encode(bytes(offset) + data).decode("ascii")
        whole = (offset + len(data)) // 3 * 4  # the last group, if partial, depends on what follows
        middle = encoded[4 if offset else 0:whole]  # the first group, if shared, on what precedes
        if len(middle) >= 8:
            forms += [middle, middle.replace("+", "-").replace("/", "_")]
    return tuple(forms)


def cut_head(form: str) -> int:
    """How much of a form's start (or end), cut short, is still redacted: two thirds, at most 16
    characters (a 40-character token cut to 38 gives away all but two), at least 8."""
    return max(8, min(16, len(form) * 2 // 3))


@dataclass(frozen=True, repr=False)
class Form:
    """One form of a secret, with the start and end long enough to be redacted when cut (no repr
    of its text: a traceback in ``%xmode Verbose`` prints the locals of the frames it passes)."""

    text: str
    head: str
    tail: str


@lru_cache(maxsize=32)
def forms_of(secrets: tuple[str, ...]) -> tuple[Form, ...]:
    """Every form of every secret, longest first (a form containing another is redacted whole);
    made once per set of secrets (a sanitizer is made per request, the forms are not)."""
    texts = dict.fromkeys(form for secret in secrets for form in secret_forms(secret))
    return tuple(Form(t, t[:cut_head(t)], t[-cut_head(t):]) for t in sorted(texts, key=len, reverse=True))


def _head_run(text: str, i: int, form: Form) -> int:
    """Where the run of ``form``'s characters from ``text[i]`` (a match of its head) ends."""
    k = len(form.head)
    while i + k < len(text) and k < len(form.text) and text[i + k] == form.text[k]:
        k += 1
    return i + k


def redact_cut(text: str, form: Form, ended: bool = True) -> str:
    """``text`` with every start of ``form`` (from its head on) that a cut marker follows replaced,
    and the one that ends ``text`` when ``ended`` (a field cut with no marker)."""
    out, at = [], 0
    while (i := text.find(form.head, at)) >= 0:
        j = _head_run(text, i, form)
        cut = text.startswith(CUT_MARKERS, j) or (ended and j == len(text))
        out.append(text[at:i] + REDACTED if cut else text[at:j])
        at = j
    return "".join(out) + text[at:]


def redact_end(text: str, form: Form) -> str:
    """``text`` with a start of ``form`` (from its head on) that ends it replaced; only the last
    ``len(form)`` characters are searched, so a text with no cut marker costs one short scan."""
    i = text.find(form.head, max(len(text) - len(form.text) + 1, 0))
    while i >= 0:
        if form.text.startswith(text[i:]):
            return text[:i] + REDACTED
        i = text.find(form.head, i + 1)
    return text


def redact_cut_tail(text: str, form: Form) -> str:
    """``text`` with every end of ``form`` (its tail at least) that a cut marker precedes replaced
    (a display that keeps a text's head and tail: :func:`truncate_middle`, ``reprlib``)."""
    out, at = [], 0
    while (i := text.find(form.tail, at)) >= 0:
        end, start, k = i + len(form.tail), i, len(form.text) - len(form.tail)
        while start > at and k > 0 and text[start - 1] == form.text[k - 1]:
            start, k = start - 1, k - 1
        marked = text.endswith(TAIL_MARKERS, at, start) or (
            text.endswith("\n", at, start) and text.endswith(TAIL_MARKERS, at, start - 1))
        out.append(text[at:start] + REDACTED if marked or k == 0 else text[at:end])
        at = end
    return "".join(out) + text[at:]
