"""A variable's text that names a credential as data: a serialised config (``json.dumps(cfg)``, on one
line or indented) and a form body (``user=ana&password=…``). Both went to the model in the variable's
description, as the same dict was redacted (attacker pass 17)."""

from __future__ import annotations

import json

import pytest

from nbagent.engine.loop import kernel_secrets
from nbagent.engine.loop.kernel_secrets import credential_variable_values

CONFIG = {"user": "ana", "password": "Js7-q2#Lm9xx-Zz", "port": 5432}


def test_a_serialised_configs_password_is_a_secret_on_one_line_or_indented() -> None:
    assert credential_variable_values({"payload": json.dumps(CONFIG)}.items()) == ("Js7-q2#Lm9xx-Zz",)
    assert credential_variable_values({"pretty": json.dumps(CONFIG, indent=2)}.items()) == ("Js7-q2#Lm9xx-Zz",)


def test_a_form_bodys_password_is_a_secret_as_the_server_reads_it() -> None:
    body = "user=ana&password=Fb7-q2%23Lm9xx-Zz&remember=1"
    assert credential_variable_values({"body": body}.items()) == ("Fb7-q2#Lm9xx-Zz",)


def test_prose_and_ordinary_json_give_nothing() -> None:
    records = json.dumps([{"id": i, "name": f"user{i}", "key": f"k{i}", "tokens": i % 900} for i in range(300)])
    prose = "the key to the 'data' is \"clean\": ask me@example.com about token counts and the password policy. " * 120
    texts = {f"t{i}": (records if i % 2 else prose) + str(i) for i in range(40)}
    assert credential_variable_values(texts.items()) == ()


def test_thousands_of_json_texts_are_each_parsed_once_within_a_walks_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    # Review of atk17, HIGH 2: past 1,024 texts every walk (each prompt, each tool call) parsed them all again.
    parsed: list[str] = []
    named_literals = kernel_secrets._named_literals
    monkeypatch.setattr(kernel_secrets, "_named_literals", lambda code: parsed.append(code) or named_literals(code))
    responses = {f"cache{j}": {f"prompt {i}": json.dumps({"id": f"msg_{j}_{i:05d}", "usage": {"input_tokens": i}})
                               for i in range(1_000)} for j in range(3)}
    responses["cache2"]["prompt 999"] = json.dumps({"user": "ana", "password": "Late-Pw-2024-xq"})
    walks = []
    for _ in range(3_000 // kernel_secrets.MAX_TEXT_SCANS + 2):
        parsed.clear()
        walks.append(credential_variable_values(responses.items()))
        assert len(parsed) <= kernel_secrets.MAX_TEXT_SCANS
    assert parsed == []  # every text was parsed once: the last walk parsed none
    assert walks[-1] == ("Late-Pw-2024-xq",)
