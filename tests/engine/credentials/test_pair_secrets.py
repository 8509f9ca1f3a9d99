"""A mapping kept as a list of (name, value) pairs (``configparser``'s ``items()``, ``parse_qsl``, a
header list) holds credentials as a dict does: its names speak for its values (attacker pass 20)."""

from __future__ import annotations

import configparser
import time
import urllib.parse
from pathlib import Path

import pytest

from nbagent.engine.credentials.kernel_secrets import code_secrets, credential_variable_values
from nbagent.engine.credentials.output_secrets import output_secrets
from nbagent.notebook.kernel_context import KernelContext
from nbagent.providers.simulated import SimulatedAPI, text_reply
from tests.engine.loop.test_query_support import make_engine, run
from tests.notebook.kernel_context.support import shell_with

SECRET = "Zq7-Loud-Tiger-42"
TOKEN = "tk_4fT9xQ2mLp8ZrW1vNc7YhK3s"


def _section() -> list[tuple[str, str]]:
    parser = configparser.ConfigParser()
    parser.read_string(f"[db]\nhost=db.internal\nuser=ana\npassword={SECRET}\n")
    return parser.items("db")


def test_a_config_section_s_items_give_its_password() -> None:
    assert credential_variable_values([("db_items", _section())]) == (SECRET,)


def test_a_parsed_query_s_pairs_and_json_s_pair_lists_and_a_header_list_give_their_credentials() -> None:
    form = urllib.parse.parse_qsl(f"user=ana&password={SECRET}&remember=1")
    pairs = [["user", "ana"], ["api_token", TOKEN]]
    headers = (("Accept", "application/json"), ("Authorization", f"Bearer {TOKEN}"))
    assert credential_variable_values([("form", form), ("pairs", pairs), ("headers", headers)]) == (SECRET, TOKEN)


def test_pairs_naming_no_credential_give_nothing() -> None:
    tagged = [("The", "DT"), ("password", "NN"), ("was", "VBD")]  # a corpus' (token, tag) pairs: "NN" is too short
    counts = [("password", 3), ("token", 5)]
    assert credential_variable_values([("tagged", tagged), ("counts", counts), ("names", [("ana", "bob-the-builder")])]) == ()


def test_a_long_corpus_of_pairs_is_read_within_a_bound() -> None:
    corpus = [(f"word{i}", f"tag-{i:06d}") for i in range(100_000)]
    start = time.process_time()
    credential_variable_values([(f"c{i}", corpus) for i in range(500)])
    assert time.process_time() - start < 2.0, "each list's first pairs only, and MAX_PAIRS a namespace"


def test_a_printed_pair_and_a_pair_in_code_give_their_value() -> None:
    printed = "[('host', 'db.internal'), ('user', 'ana'), ('password', 'Zq7-Loud-Tiger-42')]"
    assert output_secrets(printed) == (SECRET,)
    assert SECRET in code_secrets(f'session.headers.update([("X-Api-Key", "{TOKEN}"), ("password", "{SECRET}")])')
    assert code_secrets('rows = [("user", "ana"), ("city", "Lisbon-Centro")]') == ()


async def test_a_config_section_s_items_reach_the_model_redacted(tmp_path: Path) -> None:
    api = SimulatedAPI(lambda body: text_reply("ok"))
    shell = shell_with(("cp.read('settings.ini')", "db_items = cp.items('db')"), db_items=_section())
    engine = make_engine(api, tmp_path, kernel_facts=KernelContext(shell))
    await run(engine, "connect with the settings in `db_items`")
    body = str(api.requests[-1].body["messages"])
    assert SECRET not in body
    assert "('password', '[redacted]')" in body and "('user', 'ana')" in body


def test_a_field_s_label_pair_is_no_password() -> None:
    """Review of atk20: a form's choices (``("password", "Password")``) hid ``Password`` from every text."""
    assert code_secrets('fields = [("username", "Username"), ("password", "Password"), ("token", "<token>")]') == ()
    assert output_secrets("[('password', 'Password')]") == ()


def test_nested_lists_are_read_as_command_lines_within_a_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    """Review of atk20: every nested list of strings was read as a command line at each prompt (100
    dicts of 1,000 token lists: 0.6 s became 2.7 s); a variable's own list is always read."""
    from nbagent.engine.credentials import kernel_secrets, list_secrets

    calls: list[int] = []
    real = list_secrets.argv_secrets

    def counted(value: list[object]) -> list[str]:
        calls.append(1)
        return real(value)

    monkeypatch.setattr(kernel_secrets, "argv_secrets", counted)
    docs = {f"doc{i}": ["the", "cat", "sat"] for i in range(1_000)}
    cmd = ["mysqldump", "--password", SECRET]
    found = kernel_secrets.credential_variable_values([*((f"c{j}", docs) for j in range(10)), ("cmd", cmd)])
    assert found == (SECRET,)
    assert len(calls) <= list_secrets.MAX_ARGV_LISTS + 1
