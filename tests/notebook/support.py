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
    texts: list[str] = []
    last: str | None = None
    for out in outputs:
        name = out.get("name") if out.get("output_type") == "stream" else None
        if name is not None:
            text = out.get("text", "")
            text = text if isinstance(text, str) else "".join(text)
            if name == last:
                texts[-1] += text
            else:
                texts.append(text)
        last = name
    return texts
