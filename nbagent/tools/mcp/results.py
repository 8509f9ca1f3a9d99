"""What an MCP tool call gives back, as the loop's ``ToolOutput``; failures as one readable line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Mapping

import mcp.types as mcp_types

from nbagent.engine.contracts.credentials import file_uris, read_paths
from nbagent.engine.contracts.json_types import JSONObject
from nbagent.engine.contracts.tool_api import ToolOutput
from nbagent.engine.credentials.secret_forms import REDACTED

from ..file_secrets import CODE_SUFFIXES, named_file_secrets

# Images the Messages API accepts inside a tool_result; other media are described in text.
_IMAGE_TYPES = {"image/jpeg", "image/png", "image/gif", "image/webp"}


def _block(item: mcp_types.ContentBlock) -> JSONObject:
    if isinstance(item, mcp_types.TextContent):
        return {"type": "text", "text": item.text}
    if isinstance(item, mcp_types.ImageContent) and item.mime_type in _IMAGE_TYPES:
        return {"type": "image", "source": {"type": "base64", "media_type": item.mime_type, "data": item.data}}
    if isinstance(item, (mcp_types.ImageContent, mcp_types.AudioContent)):
        kind = "image" if isinstance(item, mcp_types.ImageContent) else "audio"
        return {"type": "text", "text": f"[{kind} ({item.mime_type}), {len(item.data) * 3 // 4:,} bytes: not shown]"}
    if isinstance(item, mcp_types.ResourceLink):
        about = f": {item.description}" if item.description else ""
        return {"type": "text", "text": f"[resource {item.name} at {item.uri}{about}]"}
    if isinstance(item, mcp_types.EmbeddedResource):
        res = item.resource
        if isinstance(res, mcp_types.TextResourceContents):
            return {"type": "text", "text": f"[resource {res.uri}]\n{_resource_text(str(res.uri), res.text)}"}
        return {"type": "text", "text": f"[binary resource {res.uri} ({res.mime_type or 'unknown type'}): not shown]"}
    return {"type": "text", "text": f"[{getattr(item, 'type', type(item).__name__)} content: not shown]"}


def to_tool_output(result: mcp_types.CallToolResult) -> ToolOutput:
    """The result's content for the model (text joined, images kept); the loop cuts it to size."""
    blocks = [_block(item) for item in result.content]
    if not blocks and result.structured_content is not None:
        blocks = [{"type": "text", "text": json.dumps(result.structured_content, ensure_ascii=False)}]
    content: str | list[JSONObject]
    texts = [b["text"] for b in blocks if b["type"] == "text" and isinstance(b["text"], str)]
    if len(texts) == len(blocks):
        content = "\n".join(texts) or "(no output)"
    else:
        content = blocks
    return ToolOutput(content=content, is_error=bool(result.is_error))  # the loop cuts long output


_MAX_PATHS = 64


def without_file_secrets(out: ToolOutput, tool_input: Mapping[str, object]) -> ToolOutput:
    """``out`` with the credentials its text names ``[redacted]``, by ``read_file``'s rules for
    the kinds of file the call names (:func:`~nbagent.tools.file_secrets.named_file_secrets`): a
    filesystem server's ``read_text_file`` of ``settings.ini`` or ``helpers.py`` showed the model a
    password that ``read_file`` of the same file hides (attacker pass 21). A call naming no file is
    left as it is: a web page or an issue's text is no file of the project's."""
    kinds = {_kind(raw) for raw in read_paths(tool_input)[:_MAX_PATHS] if isinstance(raw, str)}
    if not kinds:
        return out
    if isinstance(out.content, str):
        return ToolOutput(_redacted(out.content, kinds), is_error=out.is_error, display=out.display)
    blocks = [{**b, "text": _redacted(text, kinds)} if b.get("type") == "text" and isinstance(text := b.get("text"), str)
              else b for b in out.content]
    return ToolOutput(blocks, is_error=out.is_error, display=out.display)


def _kind(raw: str) -> Path:
    """A stand-in for the file, by the suffix the rules look at (``file:///…/a.py`` as ``a.py``)."""
    suffix = Path(raw.rpartition("/")[2]).suffix.lower()
    return Path(f"file{suffix}") if suffix in (".ipynb", *CODE_SUFFIXES) else Path("file.txt")


def _resource_text(uri: str, text: str) -> str:
    """An embedded resource's text; a local file's (``file:///srv/app/settings.ini``) by the file rules of
    its kind, whatever the call named (review of atk21: a search's matched files came back whole)."""
    return _redacted(text, {_kind(path) for path in file_uris([uri]) if isinstance(path, str)})


def _redacted(text: str, kinds: set[Path]) -> str:
    for kind in kinds:
        for secret in named_file_secrets(kind, text):
            text = text.replace(secret, REDACTED)
    return text


def describe_error(exc: BaseException) -> str:
    """One line for a connection failure: the innermost real error of an exception group."""
    # Duck-typed (Python 3.10 has no BaseExceptionGroup builtin; anyio raises its backport there).
    while isinstance(getattr(exc, "exceptions", None), tuple) and exc.exceptions:  # type: ignore[attr-defined]
        exc = exc.exceptions[0]  # type: ignore[attr-defined]
    if isinstance(exc, FileNotFoundError) and exc.filename:
        return f"command not found: {exc.filename}"
    text = str(exc).strip() or "(no message)"
    return f"{type(exc).__name__}: {text}"


__all__ = ["to_tool_output", "describe_error", "without_file_secrets"]
