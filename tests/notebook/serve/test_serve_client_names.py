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
