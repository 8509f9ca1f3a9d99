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
