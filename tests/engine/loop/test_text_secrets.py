"""A variable's text that names a credential as data: a serialised config (``json.dumps(cfg)``, on one
line or indented) and a form body (``user=ana&password=…``). Both went to the model in the variable's
description, as the same dict was redacted (attacker pass 17)."""

from __future__ import annotations

import json
import time

from nbagent.engine.loop.kernel_secrets import credential_variable_values

CONFIG = {"user": "ana", "password": "Js7-q2#Lm9xx-Zz", "port": 5432}


def test_a_serialised_configs_password_is_a_secret_on_one_line_or_indented() -> None:
    assert credential_variable_values({"payload": json.dumps(CONFIG)}.items()) == ("Js7-q2#Lm9xx-Zz",)
    assert credential_variable_values({"pretty": json.dumps(CONFIG, indent=2)}.items()) == ("Js7-q2#Lm9xx-Zz",)


def test_a_form_bodys_password_is_a_secret_as_the_server_reads_it() -> None:
    body = "user=ana&password=Fb7-q2%23Lm9xx-Zz&remember=1"
    assert credential_variable_values({"body": body}.items()) == ("Fb7-q2#Lm9xx-Zz",)


def test_prose_and_ordinary_json_give_nothing_and_are_read_quickly() -> None:
    records = json.dumps([{"id": i, "name": f"user{i}", "key": f"k{i}", "tokens": i % 900} for i in range(300)])
    prose = "the key to the 'data' is \"clean\": ask me@example.com about token counts and the password policy. " * 120
    texts = {f"t{i}": (records if i % 2 else prose) + str(i) for i in range(40)}
    started = time.perf_counter()
    assert credential_variable_values(texts.items()) == ()
    assert time.perf_counter() - started < 1.0
