"""The secrets a value held when a user cell showed it stay secrets of the run after the value is
masked in place: the page still shows them, and ``notebook_read`` reads the page."""

from __future__ import annotations

from nbagent.notebook import magics as magics_mod

from ..test_magics_inprocess import ip  # noqa: F401  (ip is a fixture)


def test_a_table_displayed_with_passwords_then_masked_in_place_stays_redacted(ip):  # noqa: F811
    # Only a cell's value was kept so: a table shown with display() (its page output, which
    # notebook_read reads, still shows the passwords) lost them as secrets once the frame was masked.
    ip.run_cell("%reload_ext nbagent")  # its watchers on this shell's publisher (the fixture swapped it)
    ip.run_cell('import pandas as pd\nusers = pd.DataFrame({"name": ["ann"], "password": ["hunter2-abc-13579"]})\n'
                'display(users)')
    ip.run_cell('users["password"] = "***"')

    assert "hunter2-abc-13579" in magics_mod.active_magics().session().agent.engine.credential_values()


def test_a_cell_displaying_many_tables_keeps_a_bounded_set_of_their_secrets_newest_first(ip):  # noqa: F811
    # Each display() merged its secrets into the cell's: a loop showing 1,000 frames of users kept all
    # 20,000 passwords for that cell, each display slower than the last (7.5 s, then 14.6 s per 1,000) and
    # every request's secrets() walked them all; only the newest SHOWN_SECRETS are ever used.
    from nbagent.notebook.kernel_context.figures import SHOWN_SECRETS

    ip.run_cell("%reload_ext nbagent")
    ip.run_cell('import pandas as pd\nfor i in range(60):\n'
                '    display(pd.DataFrame({"name": ["a", "b"], "password": [f"pw-{i}-a-Zq81xk", f"pw-{i}-b-Zq81xk"]}))')
    displayed = magics_mod.active_magics().displayed

    assert all(len(kept) <= SHOWN_SECRETS for kept in displayed._shown_secrets.values())
    assert {"pw-59-a-Zq81xk", "pw-59-b-Zq81xk"} <= set(displayed.secrets())  # the last table shown
    assert "pw-0-a-Zq81xk" not in displayed.secrets()
