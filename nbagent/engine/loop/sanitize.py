"""The sanitising boundary: what enters history or disk is valid UTF-8, shallow and secret-free.

Everything from outside the engine passes here before the session keeps it: tool output (built-in
tools, MCP results, file names in listings), prompts and model replies. Lone surrogates (a file
named ``b"report-\\xff.csv"``, ``print('\\udcff')``) are replaced by U+FFFD and counted, never
raised on; secret values are replaced by ``[redacted]``; JSON nested deeper than a limit is
refused. A model reply also gets unique tool_use ids here (a reused id would make the saved
history invalid).

Secrets are known two ways: by value (every ``secret_env`` variable, read at each request, and
every credential the Agent's endpoint uses; each also in the escaped and URL-quoted forms of
:mod:`~nbagent.engine.credentials.secret_forms`, and cut short by a display) and by shape
(:mod:`~nbagent.engine.credentials.key_shapes`: an Anthropic key or a bearer token, whatever variable
holds it, or none: a key typed into a cell; OpenAI's, Hugging Face's, GitHub's, Slack's, Google's and
Stripe's too). The shape check costs four substring scans per string when no marker occurs; each
shape's regex runs only where its own marker is.
"""

from __future__ import annotations

import dataclasses
import os
import re
import sys
from dataclasses import dataclass, field
from typing import Iterable, Mapping, TypeVar, cast, overload

from ..contracts.config import MAX_JSON_DEPTH
from ..contracts.messages import ContentBlock, Message, is_tool_use
from ..credentials.key_shapes import may_hold_key, redact_shapes
from ..credentials.secret_forms import MARKER_HOLD, Form, forms_of, redact_cut, redact_cut_tail, redact_end
from ..credentials.secret_forms import REDACTED as REDACTED  # re-exported: the replacement text callers compare with

_T = TypeVar("_T")
_Block = TypeVar("_Block", bound=Mapping[str, object])

# Shorter values are not treated as secrets: redacting "1" or "dev" would garble every output.
MIN_SECRET_CHARS = 8
_SURROGATE = re.compile("[\ud800-\udfff]")
class TooDeepError(ValueError):
    """A JSON value nests deeper than the boundary accepts."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"nested deeper than {limit} levels")

    def refusal(self) -> str:
        """What the model is told instead of running a call whose input nests this deep."""
        return f"Not run: the tool input was {self}; send a flatter input."


def fix_surrogates(text: str) -> tuple[str, int]:
    """``text`` with lone surrogates replaced by U+FFFD, and how many were replaced."""
    if text.isascii():  # known from the string's header: no encode pass for the common case
        return text, 0
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.subn("\ufffd", text)
    return text, 0


class SecretValues(tuple[str, ...]):
    """Secret values, as a tuple whose repr never shows them: a traceback in ``%xmode Verbose``
    prints every frame's arguments and locals with ``repr`` (a typo in ``Agent(mcp_servers=...)``
    printed the API key read from the environment into the notebook's output)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"<{len(self)} secret values>"


class SecretText(str):
    """A secret string whose repr never shows it (see :class:`SecretValues`): what a public
    entry point turns a secret argument into first, so that its own frame and every frame it is
    passed to print ``<secret>`` (``Agent.resume(folder, api_key=...)`` printed the key in
    ``kwargs``). ``str(secret)`` is the plain value, for the one place that sends it."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<secret>"


def hidden(value: str | None) -> str | None:
    """``value`` as a :class:`SecretText` (None stays None)."""
    return None if value is None else SecretText(value)


def secret_values(env_names: Iterable[str], extra: Iterable[str | None] = ()) -> SecretValues:
    """The values to redact: those of the listed environment variables, plus ``extra`` (e.g. the
    Agent's ``api_key``); longest first, so a secret containing another is redacted whole."""
    values = {os.environ.get(name) for name in env_names} | set(extra)
    # A value read from a file keeps its line end (``os.environ["ACME_GW"] = open("gw.key").read()``),
    # which the SDK and an endpoint's profile strip: the key as sent, and as code copies it
    # (``.strip()``), is the value without it.
    values |= {v.strip() for v in values if v and v != v.strip()}
    return SecretValues(sorted((v for v in values if v and len(v) >= MIN_SECRET_CHARS), key=len, reverse=True))


def short_secret_names(env_names: Iterable[str]) -> list[str]:
    """The listed variables set to a value too short to redact (see ``MIN_SECRET_CHARS``)."""
    return [name for name in env_names if 0 < len(os.environ.get(name, "")) < MIN_SECRET_CHARS]


def short_secret_notices(env_names: Iterable[str], told: set[str]) -> list[str]:
    """A notice for each variable of :func:`short_secret_names` not yet in ``told`` (then added):
    it names the variable, never the value."""
    new = [name for name in short_secret_names(env_names) if name not in told]
    told.update(new)
    # A profile's variable is in every session's secret_env (a session on another endpoint too): say so.
    return [f"The value of {name} (listed in secret_env, or read by one of your endpoint profiles) is shorter than "
            f"{MIN_SECRET_CHARS} characters, "
            "so it is not redacted from output: it could not be told apart from ordinary text." for name in new]


class StreamRedactor:
    """Redacts secrets from streamed text, where a secret may be split across deltas.

    Per content block, the last ``len(longest form) - 1`` characters of a secret (its escaped
    forms included), plus the start of a cut marker, are held back until more text arrives or the
    block ends: a secret that began in them is then redacted whole, so the view never shows it,
    not even in pieces; a start of one that ends the block is redacted as a cut one would be. A
    key known by its shape has no fixed length: the run of key characters at the cut (up to
    :data:`SHAPE_HOLD`, with a ``Bearer `` before it) is held back too, so the shape is checked
    on the whole run.
    """

    def __init__(self, sanitizer: "Sanitizer") -> None:
        self._sanitizer = sanitizer
        forms = sanitizer.forms
        self._hold = len(forms[0].text) - 1 + MARKER_HOLD if forms else 0
        self._held: dict[int, str] = {}

    def feed(self, index: int, text: str) -> str:
        """The text of block ``index`` that is safe to show now."""
        # Not ended: a start of a secret at the buffer's end may go on in the next delta.
        buf = self._sanitizer.redact_values(self._held.get(index, "") + text, ended=False)
        cut = _run_start(buf, max(len(buf) - self._hold, 0))
        self._held[index] = buf[cut:]
        return redact_shapes(buf[:cut])

    def flush(self, index: int) -> str:
        """The rest of block ``index`` at its end (it holds no whole secret of a listed value, but
        may end with a start of one, redacted as the whole block will be)."""
        return self._sanitizer.redact(self._held.pop(index, ""))

    def held(self) -> list[int]:
        """The blocks with text still held back."""
        return [i for i, text in self._held.items() if text]


SHAPE_HOLD = 256
"""How far back a run of key characters at a stream's cut is held (keys are ~110 characters)."""
_KEY_TEXT = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._~+/=-"
"""What a key of :data:`KEY_SHAPES` is made of (either shape)."""
_KEY_CHARS = frozenset(_KEY_TEXT)


def _run_start(buf: str, cut: int) -> int:
    """``cut``, moved back to the start of a run of key characters that crosses it (or ends there,
    and may go on in the next delta), and before a ``Bearer `` that precedes the run."""
    start = cut
    if cut > 0 and buf[cut - 1] in _KEY_CHARS and (cut == len(buf) or buf[cut] in _KEY_CHARS):
        floor = max(cut - SHAPE_HOLD, 0)
        start = floor + len(buf[floor:cut].rstrip(_KEY_TEXT))  # the run, found in C: once per delta
    # The token's marker stays with it (also one cut just after it, before the space).
    if buf.endswith(("Bearer ", "bearer "), 0, start):
        return start - 7
    if start == cut and buf.endswith(("Bearer", "bearer"), 0, start):
        return start - 6
    return start


@dataclass(frozen=True)
class Sanitizer:
    """Cleans text and JSON values; ``replaced`` counts are reported to the user as a notice."""

    secrets: tuple[str, ...] = field(default=(), repr=False)
    """Not in repr: a bound ``Sanitizer.redact`` is an argument of many frames a traceback shows."""
    max_depth: int = MAX_JSON_DEPTH
    forms: tuple[Form, ...] = field(init=False, repr=False, compare=False)
    """Every form of every secret, longest first (:func:`~.secret_forms.forms_of`)."""
    _plain_below: int = field(init=False, repr=False, compare=False)
    """ASCII strings shorter than this are kept as they are: no lone surrogate, and too short to
    hold any form of a secret or its cut head (with no secrets, any length)."""

    def __post_init__(self) -> None:
        forms = forms_of(self.secrets)  # cached per secret set: a request's sanitizer costs no escaping
        object.__setattr__(self, "forms", forms)
        object.__setattr__(self, "_plain_below", min(len(f.head) for f in forms) if forms else sys.maxsize)

    def text(self, text: str) -> tuple[str, int]:
        """``text`` with secrets redacted and lone surrogates replaced; the count of the latter."""
        return fix_surrogates(self.redact(text))

    def redact(self, text: str) -> str:
        """``text`` with every secret replaced by ``[redacted]`` (e.g. an error body echoing the key),
        by value and by shape."""
        return redact_shapes(self.redact_values(text))

    def redact_values(self, text: str, *, ended: bool = True) -> str:
        """``text`` with every form of the listed secret values replaced (not shapes: see
        :class:`StreamRedactor`), and a form cut short where text is shortened: its head right
        before a cut marker (``…``, ``...``, ``\\n... [``; a DataFrame's value, pandas' column width,
        :func:`truncate_middle`) or at the end of ``text`` when ``ended`` (a field cut with no
        marker), and its tail right after a marker."""
        marked = "…" in text or "..." in text  # most text has no cut marker: one short scan at the end
        for form in self.forms:
            if form.text in text:
                text = text.replace(form.text, REDACTED)
            if not marked:
                text = redact_end(text, form) if ended else text
                continue
            if form.head in text:
                text = redact_cut(text, form, ended)
            if form.tail in text:
                text = redact_cut_tail(text, form)
        return text

    @overload
    def strings(self, value: str) -> str: ...

    @overload
    def strings(self, value: _T) -> _T: ...

    def strings(self, value: object) -> object:
        """``value`` with every string in it redacted, rebuilt as it was (tuples, named tuples, lists,
        dicts, dataclass instances): for what the notebook tells the model about the kernel, before
        it is cut to size (a cut key would no longer match its value)."""
        if isinstance(value, str):
            return self.redact(value)
        if isinstance(value, tuple) and hasattr(value, "_fields"):
            return type(value)(*(self.strings(v) for v in value))
        if isinstance(value, (list, tuple)):
            return type(value)(self.strings(v) for v in value)
        if isinstance(value, dict):
            return {k: self.strings(v) for k, v in value.items()}
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            return dataclasses.replace(value, **{f.name: self.strings(getattr(value, f.name))
                                                 for f in dataclasses.fields(value) if f.init})
        return value

    @overload
    def value(self, value: str) -> tuple[str, int]: ...

    @overload
    def value(self, value: list[_Block]) -> tuple[list[_Block], int]: ...

    @overload
    def value(self, value: _Block) -> tuple[_Block, int]: ...

    def value(self, value: object) -> tuple[object, int]:
        """A JSON-like ``value`` with every string (keys too) cleaned, rebuilt in the same shape (a
        tuple becomes a list); :class:`TooDeepError` when it nests deeper than ``max_depth`` (found
        on the way down, so cleaning never recurses further)."""
        counter = [0]
        return self._clean(value, counter, 0), counter[0]

    def _clean(self, value: object, counter: list[int], depth: int, below: int | None = None) -> object:
        if below is None:
            below = self._plain_below
        if isinstance(value, str):
            if len(value) < below and value.isascii() and not may_hold_key(value):  # most strings: nothing to replace
                return value
            text, n = self.text(value)
            counter[0] += n
            return text
        if isinstance(value, dict):
            if depth >= self.max_depth:
                raise TooDeepError(self.max_depth)
            # Plain ASCII strings shorter than any secret and of no key's shape (nearly every key,
            # most values; with no secrets configured, every such string) are kept without a call.
            return {(k if type(k) is str and len(k) < below and k.isascii() and not may_hold_key(k)
                     else self._clean(k, counter, depth, below) if isinstance(k, str) else k):
                    (v if type(v) is str and len(v) < below and v.isascii() and not may_hold_key(v)
                     else self._clean(v, counter, depth + 1, below))
                    for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            if depth >= self.max_depth:
                raise TooDeepError(self.max_depth)
            return [v if type(v) is str and len(v) < below and v.isascii() and not may_hold_key(v)
                    else self._clean(v, counter, depth + 1, below) for v in value]
        return value


@dataclass
class CleanReply:
    """A model reply after the boundary: the message to keep, and tool calls not to run."""

    message: Message
    refused: dict[str, str] = field(default_factory=dict)
    """tool_use id -> why it is answered with an error instead of being run."""
    replaced: int = 0


def clean_reply(message: Mapping[str, object], sanitizer: Sanitizer, used_ids: set[str]) -> CleanReply:
    """The reply with text cleaned, over-deep tool inputs dropped and reused tool_use ids renamed.

    ``used_ids`` (every tool_use id already in history) is updated. A renamed or dropped call is
    listed in ``refused`` so the loop answers it with an error result rather than running it.
    """
    content: list[ContentBlock] = []
    out = CleanReply(message={"role": "assistant", "content": content})
    blocks = message.get("content", [])
    for block in blocks if isinstance(blocks, Iterable) else ():
        if not isinstance(block, dict):  # the cleaning below copies a dict; anything else becomes one
            block = dict(block) if isinstance(block, Mapping) else {"type": "text", "text": str(block)}
        uid = block.get("id")
        try:
            block, n = sanitizer.value(block)
        except TooDeepError as exc:
            block = {k: v for k, v in block.items() if k != "input"}
            block, n = sanitizer.value(block)
            block["input"] = {}
            out.refused[str(uid)] = exc.refusal()
        out.replaced += n
        if is_tool_use(block):
            block["id"] = _unique_id(str(block.get("id") or "toolu"), used_ids, out, str(uid))
        content.append(cast(ContentBlock, block))  # the reply's blocks enter the history here
    return out


def _unique_id(uid: str, used_ids: set[str], out: CleanReply, original: str) -> str:
    if uid not in used_ids:
        used_ids.add(uid)
        return uid
    n = 2
    while f"{uid}_dup{n}" in used_ids:
        n += 1
    new = f"{uid}_dup{n}"
    used_ids.add(new)
    out.refused[new] = out.refused.pop(original, "") or (
        f"Not run: tool_use id {uid!r} was already used in this conversation (renamed {new!r}); "
        "call the tool again with a new id.")
    return new


def replaced_notice(count: int, where: str) -> str:
    """The notice shown when ``count`` invalid characters were replaced in ``where``."""
    return f"{count} invalid character(s) (lone surrogates) in {where} were replaced by U+FFFD."
