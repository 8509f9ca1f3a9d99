"""A client's name, as the cards and ``%agent status`` show it, tells clients apart: nothing in it
may draw as nothing (attacker pass 16: "claude-code" + U+FE00 looked exactly like "claude-code",
so with ``--clients 2`` a second client passed for the one the user had allowed)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from nbagent.notebook.serve.clients import Clients, identify


def _ctx(name: str, session: str = "") -> SimpleNamespace:
    params = SimpleNamespace(client_info=SimpleNamespace(name=name))
    request = SimpleNamespace(session=SimpleNamespace(client_params=params), meta=None,
                              request=SimpleNamespace(headers={"mcp-session-id": session}))
    return SimpleNamespace(request_context=request)


@pytest.mark.parametrize("hidden", ["\ufe00", "\ufe0f", "\U000e0100", "\u3164", "\u200b", "\u17b4"])
def test_a_name_that_looks_like_another_clients_is_shown_apart_from_it(hidden: str) -> None:
    clients = Clients(max_clients=2)
    first = clients.admit(identify(_ctx("claude-code", "s1")))
    second = clients.admit(identify(_ctx(f"claude-code{hidden}", "s2")))
    assert first.name == "claude-code"
    assert second.name == "claude-code #2"  # was "claude-code" + the hidden character: the same on screen


def test_an_ordinary_name_is_kept() -> None:
    assert identify(_ctx("Cursor ✓ (Ünïcode)", "s"))[0] == "Cursor ✓ (Ünïcode)"


@pytest.mark.parametrize(("first", "second"), [("Visual Studio Code", "Visual Studio  Code"),
                                               ("Cursor", " Cursor "), ("Café", "Cafe\u0301")])
def test_a_name_that_draws_the_same_written_otherwise_is_shown_apart(first: str, second: str) -> None:
    # The card is HTML: two spaces draw as one; a composed and a combined accent draw the same letter.
    clients = Clients(max_clients=2)
    shown = clients.admit(identify(_ctx(first, "s1"))).name
    assert clients.admit(identify(_ctx(second, "s2"))).name == f"{shown} #2"


@pytest.mark.parametrize("impostor", ["\u0441laude-code", "claude-c\u043ede", "claude-cod\u0435", "\uff43laude-code",
                                      "\U0001d41claude-code"])
def test_a_name_with_letters_that_draw_like_latin_ones_is_shown_apart(impostor: str) -> None:
    # Attacker pass 29: Cyrillic "с" (U+0441) in "claude-code" drew the same as the client the user allowed.
    clients = Clients(max_clients=2)
    assert clients.admit(identify(_ctx("claude-code", "s1"))).name == "claude-code"
    shown = clients.admit(identify(_ctx(impostor, "s2"))).name
    assert shown != "claude-code" and shown.isascii(), shown


@pytest.mark.parametrize("name", ["Кодекс", "Ελληνικά", "クロード client", "Café ✓"])
def test_a_name_in_one_script_or_scripts_that_do_not_look_alike_is_kept(name: str) -> None:
    assert identify(_ctx(name, "s"))[0] == name


@pytest.mark.parametrize("impostor", ["\u0441\u04cf\u0430\u057d\u0501\u0435-\u0441\u043e\u0501\u0435",
                                      "c\u01c0aude-code", "cl\u0251ude-code", "\u13df\u13de\u13aa\u13a0\u13ac",
                                      "claude\u2010code", "claude\u2212code", "claude\u2013code"])
def test_a_name_of_letters_all_drawn_like_ascii_ones_is_shown_apart(impostor: str) -> None:
    # Attacker pass 30: "claude-code" spelt in Cyrillic and Armenian letters only (no Latin letter to
    # mix with), or with a Latin letter that is not ASCII (a dental click for "l", an alpha for "a"),
    # or a dash that is not "-" (NFKC keeps U+2010), was shown as it drew: like the client the user allowed.
    clients = Clients(max_clients=2)
    assert clients.admit(identify(_ctx("claude-code", "s1"))).name == "claude-code"
    shown = clients.admit(identify(_ctx(impostor, "s2"))).name
    assert shown.isascii() and "\\u" in shown, shown


@pytest.mark.parametrize("impostor", ["c\ua4f2aude-code", "\ua4daLAUDE-CODE"])
def test_a_name_mixing_latin_with_lisu_letters_drawn_like_latin_capitals_is_shown_apart(impostor: str) -> None:
    # Review of attacker pass 30: Lisu letters are drawn like Latin capitals ("ꓲ" like "l" or "I"), and
    # Lisu was not among the lookalike scripts: "cꓲaude-code" was shown as it drew, like "claude-code".
    clients = Clients(max_clients=2)
    clients.admit(identify(_ctx("claude-code", "s1")))
    shown = clients.admit(identify(_ctx(impostor, "s2"))).name
    assert shown.isascii() and "\\ua4" in shown, shown
