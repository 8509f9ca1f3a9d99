"""Who is connected: each client as it names itself (``clientInfo``), and how many may be at once.

With the 2026 protocol a Streamable HTTP request carries the client's name in its ``_meta`` and
there is no session; with the 2025 one the name comes from ``initialize`` and a session id tells
two instances of one client apart. A client counts as connected while it made a call within
``IDLE_S``. One at a time unless ``%agent serve --clients N`` allows more: a second client's call
is refused (never queued behind the first's cards), with the command that allows it.
"""

from __future__ import annotations

import threading
import time
import unicodedata
from dataclasses import dataclass, field
from typing import Any

from mcp_types import CLIENT_INFO_META_KEY

from ..view.render import draws_nothing
from .gate import CallRefused

IDLE_S = 600.0
"""A client with no call for this long no longer counts as connected."""
NAME_CHARS = 60


@dataclass
class Client:
    """One connected client; ``state`` holds what it read (read-before-edit is per client)."""

    name: str
    key: tuple[str, str]
    first_seen: float = field(default_factory=time.monotonic)
    last_seen: float = field(default_factory=time.monotonic)
    calls: int = 0
    state: object = None
    """The client's :class:`~.operations.ClientNotebook`, made on its first call."""


def identify(ctx: Any) -> tuple[str, str]:
    """``(name, session id)`` of the client behind an MCP request context (names are the client's
    own claim: shown to the user, never trusted for anything else)."""
    name, session = "", ""
    try:
        request = ctx.request_context
        params = request.session.client_params  # the 2025 handshake's, or built from the 2026 envelope
        info = getattr(params, "client_info", None)
        if info is None and isinstance(request.meta, dict):
            info = request.meta.get(CLIENT_INFO_META_KEY)
        name = str((info.get("name") if isinstance(info, dict) else getattr(info, "name", "")) or "")
        headers = getattr(request.request, "headers", None) or {}
        session = str(headers.get("mcp-session-id") or "")
    except Exception:  # an SDK without these attributes: an unnamed client
        pass
    # Nothing that draws as nothing: "claude-code" + U+FE00 (or a Hangul filler) looked exactly like
    # "claude-code" in the cards, so a second client passed for the one the user allowed. Nor what
    # draws the same written otherwise: the cards are HTML, which shows a run of spaces as one
    # ("Visual Studio  Code"), and an accent composed or combined (NFC) draws the same letter.
    # Compatibility forms (NFKC: a fullwidth or mathematical "ｃ") are written as the letter they draw.
    kept = "".join(ch for ch in unicodedata.normalize("NFKC", name) if ch.isprintable() and not draws_nothing(ch))
    clean = _lookalikes_escaped(" ".join(kept.split())[:NAME_CHARS])
    return clean or "unnamed client", session


LOOKALIKE_SCRIPTS = frozenset({"CYRILLIC", "GREEK", "ARMENIAN", "CHEROKEE", "COPTIC", "LISU"})
"""Scripts with letters drawn like Latin ones (Cyrillic "с" and Latin "c")."""


DRAWN_AS_ASCII = frozenset(
    "аеорсухѕіјӏԁԛԝһүАВЕКМНОРСТХЅІЈԚԜҮӀ"  # Cyrillic
    "οαινρϲυκΑΒΕΖΗΙΚΜΝΟΡΤΥΧϳϹ"  # Greek
    "սօցհոզՏՕՍԼ"  # Armenian
    "ᎪᏴᏟᎬᎻᏆᎫᏦᏞᎷᏢᏚᎢᏔᏃᎠᏀᏒᏙ"  # Cherokee
    "ⲟⲣⲥⲭⲞⲢⲤⲬ"  # Coptic
    "ɑǀıɩɡᴄᴏᴠᴡᴢꜱᴜʏ")  # Latin letters that are not ASCII ones but draw like them
"""Letters drawn (near enough) like an ASCII letter: a name of these and ASCII letters only reads as an
ASCII name ("сӏаսԁе-соԁе", Cyrillic and Armenian, reads "claude-code")."""
DRAWN_AS_HYPHEN = frozenset("\u2010\u2011\u2012\u2013\u2212\u02d7\u2043\u00ad")
"""Dashes drawn like ``-`` ("claude\u2010code" read "claude-code"), which NFKC leaves as they are."""


def _lookalikes_escaped(name: str) -> str:
    """Letters that draw like Latin ones written as ``\\u0441``, where the name mixes Latin letters
    with a script that draws like them ("сlaude-code", Cyrillic с, was shown exactly like
    "claude-code", so an impostor holding the token could be given the grant meant for the other:
    attacker pass 29), or where every letter is ASCII or drawn like one ("сӏаսԁе-соԁе" in Cyrillic
    and Armenian only, "clɑude-code" with a Latin alpha, "claude‐code" with U+2010: attacker pass
    30), those and its dashes drawn like "-". A name in one script, or mixing scripts that do not
    look alike (Latin and Japanese), is kept ("Кодекс", "Café")."""
    letters = [ch for ch in name if ch.isalpha()]
    scripts = {unicodedata.name(ch, "").split(" ")[0] for ch in letters}
    if "LATIN" in scripts and scripts & LOOKALIKE_SCRIPTS:
        escape = {ch for ch in letters if unicodedata.name(ch, "").split(" ")[0] in LOOKALIKE_SCRIPTS}
    elif any(ch in DRAWN_AS_ASCII or ch in DRAWN_AS_HYPHEN for ch in name) \
            and all(ch.isascii() or ch in DRAWN_AS_ASCII for ch in letters):
        escape = {ch for ch in name if ch in DRAWN_AS_ASCII or ch in DRAWN_AS_HYPHEN}
    else:
        return name
    return "".join(f"\\u{ord(ch):04x}" if ch in escape else ch for ch in name)


class Clients:
    """The clients of one server (any thread)."""

    def __init__(self, max_clients: int = 1) -> None:
        self.max_clients = max_clients
        self._lock = threading.Lock()
        self._clients: dict[tuple[str, str], Client] = {}

    def admit(self, key: tuple[str, str]) -> Client:
        """The client for ``key``, counted as connected now; :class:`CallRefused` if it would be
        one too many."""
        now = time.monotonic()
        with self._lock:
            client = self._clients.get(key)
            if client is None:
                active = [c for c in self._clients.values() if now - c.last_seen < IDLE_S]
                if len(active) >= self.max_clients:
                    names = ", ".join(sorted({c.name for c in active}))
                    raise CallRefused(f"This notebook serves {self.max_clients} client(s) at a time and {names} "
                                      f"is connected. The user can allow more with %agent serve --clients "
                                      f"{self.max_clients + 1} (restarts the server).")
                client = Client(self._display_name(key), key)
                self._clients[key] = client
            client.last_seen = now
            client.calls += 1
            return client

    def _display_name(self, key: tuple[str, str]) -> str:
        # Unique among the names shown: a client claiming "claude-code #2" is not shown as the
        # second session of claude-code (the user tells clients apart by these names).
        shown = {c.name for c in self._clients.values()}
        name, n = key[0], 1
        while name in shown:
            n += 1
            name = f"{key[0]} #{n}"
        return name

    def connected(self) -> list[Client]:
        now = time.monotonic()
        with self._lock:
            return [c for c in self._clients.values() if now - c.last_seen < IDLE_S]
