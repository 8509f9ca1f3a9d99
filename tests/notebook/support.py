"""Reading back what a notebook session sent or holds, narrowed for the type checker."""

from __future__ import annotations

from typing import Any

from nbagent.engine.contracts.messages import ContentBlock, Message


def list_content(message: Message) -> list[ContentBlock]:
    """The message's content blocks; fails if the content is a plain string (the messages these
    tests read always carry blocks: a prompt with its kernel context, a tool result, a reply)."""
    content = message["content"]
    assert isinstance(content, list), content
    return content


def stream_texts(outputs: list[Any]) -> list[str]:
    """A cell's stream outputs as a front-end shows them: consecutive messages of one stream joined.

    nbclient keeps every iopub ``stream`` message as an output of its own, and the kernel flushes its
    streams on a 0.2 s timer: on a loaded machine one ``print('END')`` can arrive as ``'END'`` then
    ``'\\n'`` (JupyterLab's output area joins them; an executed notebook's cell does not)."""
    return [text for name, text in _shown(outputs) if name is not None]


def output_texts(outputs: list[Any]) -> list[str]:
    """Each output's text as a front-end shows it (a stream's consecutive messages as one, see
    :func:`stream_texts`; a display or result by its ``text/plain``), in order."""
    return [text for _name, text in _shown(outputs)]


def _shown(outputs: list[Any]) -> list[tuple[str | None, str]]:
    """(stream name or None, text) per output as shown: a stream message following one of the same
    stream is added to it."""
    shown: list[tuple[str | None, str]] = []
    for out in outputs:
        name = out.get("name") if out.get("output_type") == "stream" else None
        value = out.get("text") if name is not None else out.get("data", {}).get("text/plain", "")
        value = value if isinstance(value, str) else "".join(value or "")
        if name is not None and shown and shown[-1][0] == name:
            shown[-1] = (name, shown[-1][1] + value)
        else:
            shown.append((name, value))
    return shown


def cell_text(cell: Any) -> str:
    """An executed cell's outputs as text, one output a line (see :func:`output_texts`)."""
    return "\n".join(output_texts(cell.get("outputs", [])))
