"""Tab completion on a ``%agent`` or ``%%agent`` line: the commands (``%agent co`` → ``compact``,
``config``, ``context``, ``cost``), a command's or the cell magic's options (``--max-b`` →
``--max-budget``), and tool names after ``--allow`` (or ``--allow=``). An IPython completion
matcher, which the kernel's completion request (Tab in JupyterLab and Notebook 7) reaches."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, cast

from IPython.core.completer import CompletionContext, SimpleCompletion, SimpleMatcherResult, context_matcher

from ..engine.disk.own_imports import installed_only

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell

    from .magics_api import MagicsApi

LINE_MAGIC, CELL_MAGIC = "%agent", "%%agent"
_TAKES_TOOLS = frozenset({"--allow"})


def tool_names(magics: MagicsApi) -> list[str]:
    """The tools ``--allow`` can name: the running session's (its MCP servers' too), else those a new one offers."""
    if magics.current is not None:
        return sorted(magics.current.agent.tools)
    from ..tools import BUILTIN_TOOL_CLASSES
    from .document.tools import NotebookEdit, NotebookRead, NotebookRun

    return sorted({*(cls.name for cls in BUILTIN_TOOL_CLASSES), NotebookRead.name, NotebookEdit.name, NotebookRun.name})


def _options(command: object) -> list[str]:
    """The command's long options, and ``--help`` (which every command takes)."""
    from .command_args import parser_of

    declared = (o for o in parser_of(command)._option_string_actions if o.startswith("--"))
    return sorted({*declared, "--help"})


def _after_options(magics: MagicsApi, command: object, done: list[str], token: str) -> list[str]:
    """What may come at ``token`` after the words ``done`` of a command (or the cell magic)."""
    given, equals, _ = token.partition("=")
    if equals and given in _TAKES_TOOLS and given in _options(command):
        # ``--allow=py``: argparse's other spelling; the whole word is replaced, so each offer keeps its option
        return [f"{given}={name}" for name in tool_names(magics)]
    if token.startswith("-"):
        return _options(command)
    # ``--allow a b``: every word after --allow, up to the next option, is a tool
    option = next((w for w in reversed(done) if w.startswith("-")), None)
    return tool_names(magics) if option in _TAKES_TOOLS else []


def completions(magics: MagicsApi, before_cursor: str) -> list[str]:
    """The words that can complete the line ``before_cursor`` (up to the cursor) at its last word."""
    words = before_cursor.split()
    if not words or words[0] not in (LINE_MAGIC, CELL_MAGIC):
        return []
    from .commands import COMMANDS  # at the first Tab on an %agent line: the kernel starts without the engine

    token = "" if before_cursor[-1:].isspace() else words.pop()
    if not words:  # the cursor still on "%agent" itself: IPython's magic names complete that word
        return []
    done = words[1:]
    if words[0] == CELL_MAGIC:
        return _after_options(magics, magics.agent_cell, done, token)
    if not done:
        return list(COMMANDS)
    name = done[0]
    if name == "help" and len(done) == 1:
        return list(COMMANDS)
    return _after_options(magics, COMMANDS[name], done[1:], token) if name in COMMANDS else []


def matcher(magics: MagicsApi) -> Callable[[CompletionContext], SimpleMatcherResult]:
    """An IPython completion matcher for ``%agent`` / ``%%agent`` lines: it replaces the line's
    last word (``--max-b``, not the ``b`` IPython's splitter would take) and hides Python's names,
    which mean nothing there."""
    @context_matcher()  # type: ignore[misc]  # IPython's decorator is untyped
    def agent_line(context: CompletionContext) -> SimpleMatcherResult:
        before = context.text_until_cursor
        # below an %%agent line the words are the prompt's: "%agent co" there is text, no command
        in_prompt = context.cursor_line > 0 and context.full_text.lstrip().startswith(CELL_MAGIC)
        # The first Tab imports the commands and the tools (pydantic, ipywidgets, tiktoken …): never
        # from the notebook's folder, as every import nbagent makes on its own (engine.disk.own_imports)
        with installed_only():
            found = [] if in_prompt else completions(magics, before)
        word = "" if not before or before[-1].isspace() else before.split()[-1]
        chosen = [w for w in found if w.startswith(word)]
        completions_ = [SimpleCompletion(w, type="magic") for w in chosen]
        # ``suppress``: Python's names (and jedi's) mean nothing on an %agent line; none of ours: IPython's own
        return {"completions": completions_, "suppress": bool(chosen), "matched_fragment": word, "ordered": True,
                "do_not_suppress": set()}
    return cast("Callable[[CompletionContext], SimpleMatcherResult]", agent_line)


def install(shell: InteractiveShell, magics: MagicsApi) -> None:
    """Complete ``%agent`` and ``%%agent`` lines on ``shell`` (once: a reload replaces ours)."""
    uninstall(shell)
    shell.Completer.custom_matchers.append(matcher(magics))


def uninstall(shell: InteractiveShell) -> None:
    """Remove what :func:`install` added."""
    kept = [m for m in shell.Completer.custom_matchers if getattr(m, "__qualname__", "") != _QUALNAME]
    shell.Completer.custom_matchers[:] = kept


_QUALNAME = "matcher.<locals>.agent_line"


__all__ = ["CELL_MAGIC", "LINE_MAGIC", "completions", "install", "matcher", "tool_names", "uninstall"]
