"""A password typed at ``getpass`` and left as a cell's value (``Out[n]``, no variable) reaches the
model ``[redacted]`` (attacker pass 20)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from nbagent.notebook.kernel_context import KernelContext
from nbagent.providers.simulated import SimulatedAPI, text_reply
from tests.engine.loop.test_query_support import make_engine, run
from tests.notebook.kernel_context.support import shell_with

PASSWORD = "Zq7-Loud-Tiger-99"


def _shell(*cells: str, out: dict[int, object]) -> Any:
    return shell_with(cells, Out=out, x=1)


async def test_a_getpass_value_left_as_the_cell_s_output_reaches_the_model_redacted(tmp_path: Path) -> None:
    shell = _shell("import getpass", "getpass.getpass('DB password')", out={2: PASSWORD})
    api = SimulatedAPI(lambda body: text_reply("ok"))
    await run(make_engine(api, tmp_path, kernel_facts=KernelContext(shell)), "connect to the database")
    body = str(api.requests[-1].body["messages"])
    assert PASSWORD not in body and "Out[2]: '[redacted]'" in body


def test_only_a_prompt_for_a_credential_gives_its_value() -> None:
    from nbagent.notebook.kernel_context.prompted import prompted_secrets

    shell = _shell("getpass()", "input('API key: ')", "input('Your name: ')", "name.upper()", "x = 1\ngetpass.getpass()",
                   out={1: "hunter2-hunter2", 2: "tk_4fT9xQ2mLp8ZrW1vNc7YhK3s", 3: "Ana Lisboa", 4: "ANA LISBOA",
                        5: "correct horse battery"})
    assert set(prompted_secrets(shell.user_ns)) == {"hunter2-hunter2", "tk_4fT9xQ2mLp8ZrW1vNc7YhK3s",
                                                    "correct horse battery"}


def test_a_prompt_naming_a_credential_word_only_inside_another_gives_nothing() -> None:
    """Review of atk20: ``input("Search keyword: ")`` and ``input("Keyboard layout? ")`` took the answer
    for a key, hiding ``transformers tutorial`` from every text the model read; a triple-quoted
    prompt for a password was missed."""
    from nbagent.notebook.kernel_context.prompted import prompted_secrets

    shell = _shell("input('Search keyword: ')", "input('Keyboard layout? ')", 'input("""Password: """)',
                   out={1: "transformers tutorial", 2: "portuguese-layout", 3: "hunter2-hunter2"})
    assert prompted_secrets(shell.user_ns) == ("hunter2-hunter2",)


async def test_a_hidden_prompt_s_answer_kept_under_any_name_reaches_the_model_redacted(tmp_path: Path) -> None:
    """Attacker pass 21: ``p = getpass.getpass()`` kept the password under a name no credential has,
    and the variables' descriptions sent it at every prompt."""
    shell = _shell("import getpass", "p = getpass.getpass('DB password')", out={})
    shell.user_ns["p"] = PASSWORD
    api = SimulatedAPI(lambda body: text_reply("ok"))
    await run(make_engine(api, tmp_path, kernel_facts=KernelContext(shell)), "connect to the database")
    assert PASSWORD not in str(api.requests[-1].body["messages"])


def test_getpass_under_another_name_and_an_assigned_credential_prompt_give_their_answers() -> None:
    """``from getpass import getpass as gp`` then ``gp()`` (a cell's value or a variable's), ``ask =
    getpass.getpass``, ``entered: str = input("Password: ")``."""
    from nbagent.notebook.kernel_context.prompted import prompted_secrets

    shell = _shell("from getpass import getpass as gp", "gp('DB password')", "answer = gp()",
                   "ask = getpass.getpass", "reply = ask()", "entered: str = input('Password: ')",
                   out={2: "hunter2-hunter2"})
    shell.user_ns.update(answer="Zq7-Loud-Tiger-42", reply="correct horse battery", entered="tk_4fT9xQ2mLp8ZrW1v")
    assert set(prompted_secrets(shell.user_ns)) == {"hunter2-hunter2", "Zq7-Loud-Tiger-42", "correct horse battery",
                                                    "tk_4fT9xQ2mLp8ZrW1v"}


def test_a_variable_assigned_again_or_from_an_ordinary_prompt_gives_nothing() -> None:
    """Its newest assignment decides: ``p = "plain old text"`` after ``p = getpass()`` holds no password;
    ``name = input("Your name: ")`` asked for none; a call of another function named like an alias neither."""
    from nbagent.notebook.kernel_context.prompted import prompted_secrets

    shell = _shell("p = getpass.getpass()", "p = 'plain old text'", "name = input('Your name: ')",
                   "total = compute_gp(3)", "n = len(getpass_notes)", out={})
    shell.user_ns.update(p="plain old text", name="Ana Lisboa", total="twelve point five", n="eight-chars-x")
    assert prompted_secrets(shell.user_ns) == ()


def test_an_alias_imported_after_an_earlier_read_is_known_at_the_next() -> None:
    """The cells are searched for aliases once, then only the new ones (``In`` only grows)."""
    from nbagent.notebook.kernel_context.prompted import prompted_secrets

    shell = _shell("x = 1", out={})
    assert prompted_secrets(shell.user_ns) == ()
    shell.user_ns["In"] += ["from getpass import getpass as ask_hidden", "reply = ask_hidden()"]
    shell.user_ns["reply"] = "correct horse battery"
    assert prompted_secrets(shell.user_ns) == ("correct horse battery",)


def test_a_bare_key_or_token_prompt_gives_only_an_answer_shaped_like_a_token() -> None:
    """Review of atk21: ``col = input("Which column is the primary key? ")`` hid ``customer_id`` (and
    ``input("Key metric: ")``, ``input("Enter a key word: ")``, ``input("Which pass? ")`` their answers)
    from every text the model read; a bare key or token is one by its shape, as a variable's is."""
    from nbagent.notebook.kernel_context.prompted import prompted_secrets

    shell = _shell("col = input('Which column is the primary key? ')", "m = input('Key metric to optimise: ')",
                   "kw = input('Enter a key word to search: ')", "stage = input('Which pass? (train/test) ')",
                   "hf = input('HF token: ')", "k = input('Enter key: ')", "s = input('Secret key: ')",
                   "p = input('Pass: ')", "input('Sort key: ')", out={9: "region_name"})
    shell.user_ns.update(col="customer_id", m="f1_macro_avg", kw="regression", stage="validation",
                         hf="hf_AbCdEfGhIjKlMnOpQrStUvWxYz123456", k="tk_4fT9xQ2mLp8ZrW1vNc7YhK3s",
                         s="correct horse battery", p="hunter2-hunter2")
    assert set(prompted_secrets(shell.user_ns)) == {"hf_AbCdEfGhIjKlMnOpQrStUvWxYz123456", "tk_4fT9xQ2mLp8ZrW1vNc7YhK3s",
                                                    "correct horse battery", "hunter2-hunter2"}


def test_a_variable_bound_again_by_a_loop_a_tuple_or_with_gives_nothing() -> None:
    """Review of atk21: ``for s in df.columns`` after ``s = getpass()`` left ``s`` holding the last
    column's name, hidden from every text the model read as if it were the password."""
    from nbagent.notebook.kernel_context.prompted import prompted_secrets

    shell = _shell("s = getpass.getpass()", "for i, s in enumerate(df.columns):\n    print(i)",
                   "p = getpass.getpass()", "p, q = 'alpha-beta-gamma', 2", "f = getpass.getpass()",
                   "with open('notes.txt') as f:\n    pass", "w = getpass.getpass()", "if (w := next(words)):\n    pass",
                   "kept = getpass.getpass()", "for item in kept.split(','):\n    print(item)",
                   "g = getpass.getpass()", "n = 0\nfor g in groups:\n    n += 1", out={})
    shell.user_ns.update(s="customer_id", p="alpha-beta-gamma", f="notes-opened", w="the-next-word",
                         kept="Zq7-Loud-Tiger-42", g="group-by-region")
    assert prompted_secrets(shell.user_ns) == ("Zq7-Loud-Tiger-42",)


def test_getpass_s_module_under_another_name_and_an_alias_imported_over_lines_give_their_answers() -> None:
    """``import getpass as gpm`` then ``v = gpm.getpass()``, ``from getpass import (\\n getpass as ask,\\n)``, and
    ``if (w := getpass.getpass()):``."""
    from nbagent.notebook.kernel_context.prompted import prompted_secrets

    shell = _shell("import getpass as gpm", "v = gpm.getpass()", "from getpass import (\n    getpass as ask_pw,\n)",
                   "answer = ask_pw()", "if (w := getpass.getpass('DB password')):\n    connect(w)", out={})
    shell.user_ns.update(v="Zq7-Loud-Tiger-42", answer="correct horse battery", w="tk-walrus-answer-9")
    assert set(prompted_secrets(shell.user_ns)) == {"Zq7-Loud-Tiger-42", "correct horse battery", "tk-walrus-answer-9"}


def test_an_alias_is_searched_again_after_reset_emptied_the_cells() -> None:
    """Review of atk21: ``%reset`` empties ``In`` (the same list); with more cells run since than before,
    the new session's alias was never searched (its answer reached the model), and the old one stayed."""
    from nbagent.notebook.kernel_context.prompted import prompted_secrets

    shell = _shell("from getpass import getpass as old_ask", "x = 1", out={})
    shell.user_ns.update(total="not a password at all")
    assert prompted_secrets(shell.user_ns) == ()
    shell.user_ns["In"][:] = ["", "from getpass import getpass as ask_hidden", "y = 2", "z = 3", "reply = ask_hidden()",
                              "total = old_ask(3)"]
    shell.user_ns["reply"] = "correct horse battery"
    assert prompted_secrets(shell.user_ns) == ("correct horse battery",)


def test_a_prompt_s_answer_assigned_inside_a_function_is_not_the_namespace_s_variable() -> None:
    """Review of atk21: ``def login():\\n    p = getpass.getpass()`` made the namespace's older, unrelated
    ``p = "north-region"`` a password, hidden from every text the model read; at the top level, inside an
    ``if`` or a ``with``, the assignment is the namespace's."""
    from nbagent.notebook.kernel_context.prompted import prompted_secrets

    shell = _shell("p = 'north-region'", "def login():\n    p = getpass.getpass()\n    return connect(p)",
                   "class Client:\n    def ask(self):\n        if True:\n            q = getpass.getpass()",
                   "if interactive:\n    with open('x') as fh:\n        kept = getpass.getpass()",
                   "def helper(x):\n    kept = x * 2\n    return kept", out={})
    shell.user_ns.update(p="north-region", q="quarterly-report", kept="Zq7-Loud-Tiger-42")
    assert prompted_secrets(shell.user_ns) == ("Zq7-Loud-Tiger-42",)
