"""Records held as text in a kernel's variables, for :mod:`.kernel_secrets`: a serialised config
(``payload = json.dumps(cfg)``) and a form body (``body = "user=ana&password=…&remember=1"``).

The same config as a dict is redacted by its keys; as text it went to the model whole. Such a text is
parsed (``json.loads``, ``parse_qsl``) and the result walked by the dict rule, nothing else: no new
rule of names. Only texts of a record's shape are looked at (a ``{``/``[`` first, or a one-line
``key=value&key=value``), within a walk's own budget (:class:`TextScans`), so the walk's other bounds,
and what they redact, stay as they were; a text's result is remembered by its hash, so a namespace's
texts are each parsed once, not at every prompt and tool call.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from typing import Callable, Iterable
from urllib.parse import parse_qsl

from ..disk.json_depth import loads_within
from .frame_secrets import PLAIN_WORD

MAX_TEXT_CHARS = 16_384
"""The longest text parsed: a config or a form body, not a data file."""
MAX_TEXT_SCANS, MAX_SCAN_CHARS = 200, 1_000_000
"""Texts not yet remembered parsed in one walk, and the characters of those parsed (each for a
variable's own texts and for texts inside containers apart: a cache of 10,000 responses does not
leave ``payload = json.dumps(cfg)`` unread). A text naming no credential's word is never parsed and
spends neither (it is remembered at its first look). Later walks read the rest."""
MAX_FORM_FIELDS = 100
"""Fields of a form body parsed (a login's or a request's has a few)."""
MAX_VARIABLE_SCANS = 50
"""Texts inside one variable's containers parsed in one walk: a cache of 4,000 responses naming
``input_tokens`` does not take every parse from ``cfgs = {"prod": json.dumps(cfg)}`` after it."""
MAX_TEXT_SECRETS = 500
"""Distinct secrets texts give one walk (a token repeated in five logs counts once; the order the dict
walk's 500 mappings give for the same records): each is one more form the sanitizer scans every text
for, and 10,000 cached responses with a token each made every request's redaction take 0.3 s (review
of sec18, MEDIUM 1). Of them, :data:`OWN_TEXT_SECRETS` are kept for variables' own texts, and at most
:data:`MAX_VARIABLE_SECRETS` come from one variable's texts: once earlier caches are remembered they
give their whole share at every walk, and ``cfg_json`` after them, found at the first walk, was then
dropped (second review of sec18, MEDIUM A)."""
OWN_TEXT_SECRETS = 100
"""Of :data:`MAX_TEXT_SECRETS`, those that texts inside containers cannot take: a variable's own text
(``cfg_json = json.dumps(cfg)``) is read whatever caches come before it."""
MAX_VARIABLE_SECRETS = 100
"""Distinct secrets one variable's texts give one walk (its own text and those inside its containers)."""
MAX_REMEMBERED = 200_000
"""Texts' results remembered, by hash (the text itself is never kept); past it the least recently used
is forgotten, not all of them. An entry costs ~140 B with no secret (measured: 28 MB at 200,000), plus
its secrets, of which it keeps at most :data:`MAX_VARIABLE_SECRETS` (no walk takes more from one text)."""
MAX_REMEMBERED_BYTES = 32_000_000
"""The secrets the memory holds, in bytes (:func:`_secret_bytes`): a session of fresh 2 KB OAuth
responses filled 200,000 entries with 455 MB, 16 KB texts of passwords with 3.3 GB (second review of
sec18, LOW C). Past it the least recently used entries are forgotten."""
_SECRET_BYTES = 64
"""What a kept secret costs besides its characters: the str's header and its place in the tuple."""
MIN_REMEMBERED_CHARS = 256
"""A shorter text naming no credential is looked at again at each walk, not remembered: the look costs
less than remembering, and 300,000 log lines cycling through the memory made every walk 3× main's."""
_JSON_START = re.compile(r"\s*[\[{]")
_OPENERS = ("{", "[")
RECORD_FIRSTS = frozenset("{[ \t\r\n")
"""A record's text starts so, or has a ``&`` (a form body): the walk's test for every text, before
:meth:`TextScans.secrets` is called."""
_FORM = re.compile(r"[A-Za-z_][\w.\-\[\]]{0,63}=[^&\s]*(?:&[A-Za-z_][\w.\-\[\]]{0,63}=[^&\s]*)+")
"""A form body on one line (``user=ana&password=…&remember=1``): two fields at least, no space."""
_WORDS = ("pass", "pw", "secret", "token", "key", "auth", "credential", "dsn", "webhook")
"""A word every credential's name has (the dict rule's names): a text with none is not parsed."""
_REMEMBERED: OrderedDict[int, tuple[str, ...]] = OrderedDict()
"""Results by the hash of the text and the name it is held under (a JSON list's items are read by
its variable's name: ``passwords``, not ``_``). The hash is salted per process, 64 bits: two texts
of one namespace sharing one is not to be expected; the text itself is never kept."""
_REMEMBERED_BYTES = [0]
"""The bytes of the secrets :data:`_REMEMBERED` holds (:func:`_secret_bytes`)."""


def _secret_bytes(secrets: tuple[str, ...]) -> int:
    """About what ``secrets`` hold in memory (characters plus a str's and a tuple slot's overhead)."""
    return sum(len(secret) for secret in secrets) + _SECRET_BYTES * len(secrets)


def _remember(key: int, secrets: tuple[str, ...]) -> tuple[str, ...]:
    """Keep a text's result (at most :data:`MAX_VARIABLE_SECRETS` of its secrets), forgetting the least
    recently used past :data:`MAX_REMEMBERED` entries or :data:`MAX_REMEMBERED_BYTES`."""
    kept = secrets[:MAX_VARIABLE_SECRETS]
    _REMEMBERED[key] = kept
    _REMEMBERED_BYTES[0] += _secret_bytes(kept)
    while _REMEMBERED and (len(_REMEMBERED) > MAX_REMEMBERED or _REMEMBERED_BYTES[0] > MAX_REMEMBERED_BYTES):
        _REMEMBERED_BYTES[0] -= _secret_bytes(_REMEMBERED.popitem(last=False)[1])
    return kept


def forget() -> None:
    """Forget every remembered result (tests; a kernel restart does it by itself)."""
    _REMEMBERED.clear()
    _REMEMBERED_BYTES[0] = 0


def _names_a_credential(low: str) -> bool:
    """Whether a lowercased text has one of :data:`_WORDS` (C-speed looks: a generator costs more than
    all of them on a log line)."""
    return ("pass" in low or "pw" in low or "secret" in low or "token" in low or "key" in low or "auth" in low
            or "credential" in low or "dsn" in low or "webhook" in low)


Walker = Callable[[Iterable[tuple[object, object]]], tuple[str, ...]]


class TextScans:
    """One walk's parsing of record-shaped texts: its budgets, and the dict rule (``walker``: the
    walk itself, reading nothing as text again) the parsed records are read by."""

    def __init__(self, walker: Walker) -> None:
        self._walker = walker
        self._left = {True: [MAX_TEXT_SCANS, MAX_SCAN_CHARS], False: [MAX_TEXT_SCANS, MAX_SCAN_CHARS]}
        self._share = MAX_VARIABLE_SCANS
        self._secrets_left = MAX_TEXT_SECRETS
        self._secrets_share = MAX_VARIABLE_SECRETS
        self._given: set[str] = set()  # the secrets this walk's texts gave: one repeated is not counted again

    def next_variable(self) -> None:
        """The walk is at the namespace's next variable: its texts get shares of their own."""
        self._share = MAX_VARIABLE_SCANS
        self._secrets_share = MAX_VARIABLE_SECRETS

    def secrets(self, name: object, value: str, own: bool) -> tuple[str, ...]:
        """The secrets the record ``value`` holds (a variable's own text when ``own``) not given yet
        this walk, by the dict rule: ``()`` for a text of no record's shape, or one the budgets leave
        for a later walk. The walk calls it only for a text :data:`RECORD_FIRSTS` passes."""
        room = min(self._secrets_left - (0 if own else OWN_TEXT_SECRETS), self._secrets_share)
        if room <= 0 or (len(value) <= MIN_REMEMBERED_CHARS and not _names_a_credential(value.lower())):
            return ()
        key = hash((value, name if type(name) is str else None))  # str hashes are cached: no user code
        known = _REMEMBERED.get(key)
        if known is None:
            known = self._looked(name, value, own)
            if known is None:
                return ()
            known = _remember(key, known)
        else:
            _REMEMBERED.move_to_end(key)
        if not known:  # most texts naming a credential's word hold none (an LLM response's input_tokens)
            return known
        given = self._given
        fresh = tuple(dict.fromkeys(secret for secret in known if secret not in given))[:room]
        given.update(fresh)
        self._secrets_left -= len(fresh)
        self._secrets_share -= len(fresh)
        return fresh

    def _looked(self, name: object, value: str, own: bool) -> tuple[str, ...] | None:
        """What a text not remembered gives (``()`` for no record's shape): None when it is to be read
        at a later walk, past a budget."""
        if len(value) > MAX_TEXT_CHARS:
            return None
        if not _names_a_credential(value.lower()):  # nothing to parse, nothing spent
            return ()
        head = value[:1]
        if head in _OPENERS or (head.isspace() and _JSON_START.match(value) is not None):
            form = False
        elif "\n" not in value and _FORM.fullmatch(value) is not None:
            form = True
        else:  # no record: so at every walk
            return ()
        left = self._left[own]
        if left[0] <= 0 or left[1] < len(value) or (not own and self._share <= 0):
            return None
        left[0] -= 1
        left[1] -= len(value)
        self._share -= not own
        return self._parsed(name, value, form)

    def _parsed(self, name: object, value: str, form: bool) -> tuple[str, ...]:
        """The dict rule's secrets in the parsed record, but for a plain word (``Passwort``), as a
        settings table's route takes them: the two routes of a record held as data agree."""
        return tuple(secret for secret in self._record_secrets(name, value, form) if not PLAIN_WORD.fullmatch(secret))

    def _record_secrets(self, name: object, value: str, form: bool) -> tuple[str, ...]:
        """What the dict rule (the walk, texts not parsed again) finds in ``value`` parsed: a form
        body's fields as pairs, a JSON object or list under the name it is held by; ``()`` when the
        text is no such record after all."""
        if form:  # the fields as the server reads them (``%23`` is ``#``): the sanitizer knows the quoted form
            try:
                return self._walker(parse_qsl(value, max_num_fields=MAX_FORM_FIELDS))
            except ValueError:  # more fields than a form has: a data string, counted before any is parsed
                return ()
        try:
            record = loads_within(value)
        except ValueError:  # not JSON after all ("[INFO] …"), or nested past the bound
            return ()
        return self._walker([(name, record)]) if type(record) in (dict, list) else ()


__all__ = ["MAX_FORM_FIELDS", "MAX_REMEMBERED", "MAX_REMEMBERED_BYTES", "MAX_SCAN_CHARS", "MAX_TEXT_CHARS",
           "MAX_TEXT_SCANS", "MAX_TEXT_SECRETS", "MAX_VARIABLE_SCANS", "MAX_VARIABLE_SECRETS", "OWN_TEXT_SECRETS",
           "RECORD_FIRSTS", "TextScans", "forget"]
