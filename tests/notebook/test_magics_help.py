"""``%agent`` help is generated from each command's ``magic_arguments`` declarations, so
``%agent help``, ``%agent COMMAND --help`` and ``%agent?`` agree; a bad argument fails the cell."""

from __future__ import annotations

import pytest
from IPython.utils.capture import capture_output

from nbagent.notebook import command_args, commands
from nbagent.notebook import magics as magics_mod

from .test_magics_inprocess import fails, ip, run  # noqa: F401  (ip is a fixture)


def _declared(command: object) -> list[str]:
    """Every option string and metavar the command's parser declares."""
    names = []
    for action in command.parser._actions:  # type: ignore[attr-defined]
        names += list(action.option_strings) or [action.metavar or action.dest]
    return names


def test_help_command_and_question_mark_show_the_same_generated_text(ip):  # noqa: F811
    overview = commands.overview(magics_mod.AgentMagics.agent_cell)
    assert run(ip, "%agent help").strip() == overview == run(ip, "%agent").strip()
    with capture_output() as cap:
        ip.run_cell("%agent?")
    assert overview in cap.stdout
    for name, command in commands.COMMANDS.items():
        assert f"%agent {name}" in overview
        for option in _declared(command):
            assert option in command_args.help_text(command)
    for option in _declared(magics_mod.AgentMagics.agent_cell):
        assert option in overview


@pytest.mark.parametrize("name", sorted(commands.COMMANDS))
def test_every_command_explains_itself_with_help(ip, name):  # noqa: F811
    text = command_args.help_text(commands.COMMANDS[name])
    assert text.startswith(f"usage: %agent {name}")
    assert run(ip, f"%agent {name} --help").strip() == text
    assert run(ip, f"%agent help {name}").strip() == text


def test_cell_help_prints_the_options_and_sends_nothing(ip):  # noqa: F811
    sent = len(magics_mod.active_magics().session().agent.sent)
    assert run(ip, "%%agent --help\n").strip() == command_args.help_text(magics_mod.AgentMagics.agent_cell)
    assert len(magics_mod.active_magics().session().agent.sent) == sent


@pytest.mark.parametrize("line, expected", [
    ("%agent rollback", "usage: %agent rollback TURN"),
    ("%agent rollback two", "invalid int value: 'two'"),
    ("%agent rollback -1", "must be a turn number"),
    ("%agent status --verbose", "unrecognized arguments: --verbose"),
    ("%agent mode shout", "usage: %agent mode chat|python"),
    ("%agent saw 'unclosed", "usage: %agent saw [TURN]"),
    ("%agent retry --bogus", "unrecognized arguments: --bogus"),
    ("%agent fix --max-turns 0", "must be at least 1"),
])
def test_bad_arguments_fail_the_cell_with_one_usage_error(ip, line, expected):  # noqa: F811
    assert expected in fails(ip, line)
