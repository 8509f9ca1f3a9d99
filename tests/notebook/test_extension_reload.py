"""``%reload_ext nbagent`` keeps the kernel's agent state, as reloading any extension keeps the kernel's.

It started afresh: the old session stayed open with its folder locked (an agent cell in the same
second failed with "in use by another Agent in this process"), and ``%agent cost`` said "No agent
session yet" after money was spent.
"""

from __future__ import annotations

from nbagent.notebook import magics as magics_mod

from .test_magics_inprocess import ip, run, session  # noqa: F401  (ip is a fixture)


def test_reload_ext_keeps_the_conversation_and_what_it_spent(ip):  # noqa: F811
    run(ip, "%%agent --allow python\nWhat is 2 * 7?")
    before, spent = session(), run(ip, "%agent cost").splitlines()[1]
    assert "spent $" in spent and "$0.0000" not in spent

    run(ip, "%reload_ext nbagent")

    assert session() is before
    assert spent in run(ip, "%agent cost")  # was: UsageError "No agent session yet in this kernel"
    run(ip, "%%agent --allow python\nWhat is 3 * 7?")
    assert session() is before and before.turn >= 2


def test_reload_ext_takes_new_config_and_registers_no_second_watcher(ip):  # noqa: F811
    watchers = len(ip.events.callbacks["post_run_cell"])
    run(ip, "%config AgentMagics.notes = 400")

    run(ip, "%reload_ext nbagent")

    magics = magics_mod.active_magics()
    assert magics.notes == 400
    assert len(ip.events.callbacks["post_run_cell"]) == watchers
    magics.notes = 0


PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="


def test_reload_ext_keeps_the_images_user_cells_display_for_the_next_prompt(ip):  # noqa: F811
    # The new magics' own watcher took the display hooks over, and was then dropped for the kept
    # one: after a reload no plot a cell showed reached a prompt ("the plot above"), nor a replay's
    # check that a plot the answer was about is the same (a plot not kept is not compared).
    ip.run_cell("%reload_ext nbagent")  # outside capture_output, which swaps the publisher while it runs
    magics_mod.active_magics().displayed.images.clear()  # kept by the reload: earlier tests' in this shell
    image = f"from IPython.display import Image; import base64; Image(base64.b64decode('{PNG}'))"
    ip.run_cell(f"{image.replace('; Image(', '; display(Image(')})")  # display(): the publisher
    ip.run_cell(image)  # the cell's value: the display hook

    assert len(magics_mod.active_magics().displayed.images) == 2  # was 0


def test_reload_ext_keeps_redacting_a_table_shown_with_passwords_then_masked_in_place(ip):  # noqa: F811
    # The page still shows the table as it was displayed (notebook_read reads it there), so the
    # passwords it showed stay secrets of the run after the frame is masked. After a reload the kept
    # watcher saw no display: they were sent to the model unredacted.
    ip.run_cell("%reload_ext nbagent")
    ip.run_cell('import pandas as pd\nusers = pd.DataFrame({"name": ["ann"], "password": ["hunter2-xyz-98765"]})\nusers')
    ip.run_cell('users["password"] = "***"')

    engine = magics_mod.active_magics().session().agent.engine
    assert "hunter2-xyz-98765" in engine.credential_values()  # was: not a secret any more
    assert "hunter2-xyz-98765" not in engine.sanitizer().redact("shown: hunter2-xyz-98765")

