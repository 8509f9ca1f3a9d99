"""``%agent serve`` where it cannot serve, and its help: one line, the cell fails, nothing left running."""

from __future__ import annotations

import threading

import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output

from nbagent.notebook import commands, extension
from nbagent.notebook.serve import command


@pytest.fixture
def magics(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    # Loaded, never unloaded: the shell is shared with the other in-process tests, and IPython's
    # extension manager would still call nbagent loaded after an unload.
    return extension.load(InteractiveShell.instance())


def test_serving_outside_a_kernel_fails_the_cell_with_one_line(magics):
    threads = threading.active_count()
    with pytest.raises(UsageError, match="needs a running kernel loop"):
        commands.run(magics, "serve")
    assert command.current() is None and threading.active_count() == threads  # no server thread left


def test_stop_when_not_serving_and_the_help_lists_serve(magics):
    with capture_output() as out:
        commands.run(magics, "serve --stop")
        commands.run(magics, "help")
    assert "nbagent: not serving." in out.stdout
    assert "%agent serve" in out.stdout and "every edit" in out.stdout


def test_clients_out_of_range_is_a_usage_error(magics):
    with pytest.raises(UsageError, match="--clients takes 1 to 8"):
        commands.run(magics, "serve --clients 0")
