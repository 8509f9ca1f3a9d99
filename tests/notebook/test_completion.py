"""Tab on a ``%agent`` / ``%%agent`` line completes the commands, their options and tool names,
in an in-process shell and through a real kernel's completion request (what JupyterLab sends)."""

from __future__ import annotations

from typing import Any, Iterator, cast

import pytest
from IPython.core.completer import provisionalcompleter
from IPython.core.interactiveshell import InteractiveShell

from nbagent.notebook import completion, magics_api
from nbagent.tools import BUILTIN_TOOL_CLASSES

from ..kernel_driver import KernelDriver


@pytest.fixture
def ip(tmp_path, monkeypatch) -> Iterator[Any]:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    shell = InteractiveShell.instance()
    # the shell is the process's one: an earlier test file's %config (a refused value too) and its
    # running session must not reach the reload below or the tool names offered
    monkeypatch.delitem(shell.config, "AgentMagics", raising=False)
    shell.run_cell("%load_ext nbagent")
    monkeypatch.setattr(magics_api.active(), "current", None)
    yield shell


def tab(ip: Any, text: str) -> list[tuple[int, str]]:
    """What Tab offers at the end of ``text``: each completion's start and text."""
    with provisionalcompleter():
        return [(c.start, c.text) for c in ip.Completer.completions(text, len(text))]


def test_a_command_word_completes_to_the_commands_only(ip: Any) -> None:
    # before: "%agent co" offered only IPython's magics (%colors, %config …), "%agent " Python keywords
    assert tab(ip, "%agent co") == [(7, "cost"), (7, "context"), (7, "config"), (7, "compact")]
    offered = [text for _, text in tab(ip, "%agent ")]
    assert offered[:3] == ["status", "history", "cost"] and "if" not in offered and "abs" not in offered
    assert tab(ip, "%agent help ro") == [(12, "rollback")]


def test_tab_right_after_the_magic_name_raises_nothing(ip: Any, capsys: Any) -> None:
    # before: "%agent" / "%%agent" with the cursor at its end raised IndexError in our matcher, so
    # IPython printed its traceback (to the kernel's stderr) at each such Tab
    for text in ("%agent", "%%agent"):
        assert completion.completions(cast(Any, magics_api.active()), text) == []
        offered = [t for _, t in tab(ip, text)]
        assert text in offered
    assert "Traceback" not in capsys.readouterr().err


def test_the_first_tabs_imports_never_come_from_the_notebooks_folder(ip: Any, monkeypatch: Any) -> None:
    # before: the Tab imported the commands and the tools (pydantic, ipywidgets, tiktoken) unguarded,
    # so an optional dependency they try was looked for in the notebook's folder, and tiktoken_ext
    # kept that folder's part for the first prompt's token count to import
    from nbagent.engine.disk import own_imports

    marked: list[bool] = []

    def recording(magics: Any, before: str) -> list[str]:
        marked.append(getattr(own_imports._marked, "on", False))
        return []

    monkeypatch.setattr(completion, "completions", recording)
    tab(ip, "%%agent --allow ")
    assert marked == [True]


def test_an_option_completes_whole_with_its_dashes(ip: Any) -> None:
    # IPython's splitter cuts at "-": the completion replaces the whole word, not its last part
    assert tab(ip, "%%agent --max-b") == [(8, "--max-budget")]
    assert (12, "--help") in tab(ip, "%agent cost --")
    assert tab(ip, "%%agent --allow python --no-c") == [(23, "--no-cells")]


def test_the_words_after_allow_complete_to_tool_names(ip: Any) -> None:
    assert tab(ip, "%%agent --allow py") == [(16, "python")]
    assert tab(ip, "%%agent --allow python wr") == [(23, "write_file")]
    assert [t for _, t in tab(ip, "%%agent --allow notebook_")] == ["notebook_edit", "notebook_read", "notebook_run"]


def test_allow_with_an_equals_sign_completes_to_tool_names(ip: Any) -> None:
    # before: "--allow=py" offered IPython's magics (%pycat, %pylab …), no tool
    assert tab(ip, "%%agent --allow=py") == [(8, "--allow=python")]
    assert tab(ip, "%agent fix --allow=wr") == [(11, "--allow=write_file")]
    assert [t for _, t in tab(ip, "%%agent --allow=notebook_")] == [
        "--allow=notebook_edit", "--allow=notebook_read", "--allow=notebook_run"]
    assert not [t for _, t in tab(ip, "%%agent --new=py") if t.startswith("--new=")]  # only --allow takes tools
    assert "python" not in [t for _, t in tab(ip, "%%agent --model py")]  # a model's name is no tool


def test_the_running_sessions_tools_are_offered() -> None:
    # no session yet: what a new one offers; a running one: its own (an MCP server's tools too)
    assert {cls.name for cls in BUILTIN_TOOL_CLASSES} <= set(completion.tool_names(cast(Any, _Magics(None))))
    running = _Magics(_Session({"python": None, "mcp__db__query": None}))
    assert completion.tool_names(cast(Any, running)) == ["mcp__db__query", "python"]


def test_python_lines_keep_pythons_completions(ip: Any) -> None:
    assert (0, "print") in tab(ip, "pri")
    assert any(t == "%config" for _, t in tab(ip, "x = 1; %agent co"))  # not an %agent line: IPython's own


def test_the_prompt_text_of_an_agent_cell_gets_no_agent_completions(ip: Any) -> None:
    # before: "%agent co" on a prompt line of an %%agent cell offered the commands (the text is the prompt's)
    assert "cost" not in [t for _, t in tab(ip, "%%agent\n%agent co")]
    assert "--max-budget" not in [t for _, t in tab(ip, "%%agent --allow python\nkeep it under --max-b")]
    assert tab(ip, "x = 1\n%agent co")[0] == (13, "cost")  # a Python cell's second line is its own %agent line
    assert tab(ip, "%%agent --max-b\nWhat is 2 + 2?"[:15]) == [(8, "--max-budget")]


def _magics_taking_config(ip: Any) -> int:
    return sum(type(c).__name__ == "AgentMagics" for c in ip.configurables)


def test_unloading_removes_the_completions(ip: Any) -> None:
    before = _magics_taking_config(ip)
    ip.run_cell("%unload_ext nbagent")
    try:
        assert "cost" not in [t for _, t in tab(ip, "%agent co")]
    finally:
        ip.run_cell("%load_ext nbagent")
    assert tab(ip, "%agent co")[0] == (7, "cost")
    # before: the unloaded magics still took %config, so a setting was said (and set) twice after a reload
    assert _magics_taking_config(ip) == before
    names = [getattr(m, "__qualname__", "") for m in ip.Completer.custom_matchers]
    assert names.count("matcher.<locals>.agent_line") == 1  # loaded twice, installed once


@pytest.mark.parametrize("kernel_name", ["python3", "nbagent"])
def test_a_kernels_completion_request_offers_the_commands(kernel_name: str, tmp_path: Any) -> None:
    d = KernelDriver(kernel_name, cwd=str(tmp_path), widgets=False)
    try:
        d.wait_done(d.execute("%load_ext nbagent"), 60)
        code = "%%agent --allow py\nWhat is 2 + 2?"
        reply = d.kc.complete(code, len("%%agent --allow py"), reply=True, timeout=60)["content"]
        assert reply["status"] == "ok"
        assert reply["matches"] == ["python"]
        assert (reply["cursor_start"], reply["cursor_end"]) == (16, 18)
        reply = d.kc.complete("%agent ro", 9, reply=True, timeout=60)["content"]
        assert reply["matches"] == ["rollback"]
    finally:
        d.close()


class _Session:
    def __init__(self, tools: dict[str, None]) -> None:
        self.agent = type("A", (), {"tools": tools})()


class _Magics:
    def __init__(self, current: _Session | None) -> None:
        self.current = current
