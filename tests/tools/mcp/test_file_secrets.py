"""A file read through an MCP server's tool shows the model what ``read_file`` of it would: the
credentials its text names ``[redacted]`` (attacker pass 21; only known values and token shapes were)."""

from __future__ import annotations

import sys
from pathlib import Path

from nbagent.engine.contracts.tool_api import ToolOutput
from nbagent.providers.simulated import SimulatedAPI, text_reply, tool_reply
from nbagent.tools.mcp.results import without_file_secrets

from .test_agent import SERVERS, make_agent, results

PASSWORD = "Zq7-Loud-Tiger-42"


async def test_a_filesystem_server_s_read_of_a_project_config_reaches_the_model_redacted(tmp_path: Path) -> None:
    (tmp_path / "settings.ini").write_text(f"[db]\nhost = db.internal\npassword = {PASSWORD}\n", encoding="utf-8")
    api = SimulatedAPI([tool_reply("mcp__fs__read_text_file", {"path": str(tmp_path / "settings.ini")}),
                        text_reply("done")])
    agent = make_agent(api, tmp_path, mcp_servers={"fs": {"command": sys.executable, "args": [str(SERVERS / "files_server.py")]}})
    try:
        events = [e async for e in agent.run("what database do we use?")]
    finally:
        await agent.aclose()
    (result,) = results(events)
    assert "db.internal" in result.content and PASSWORD not in result.content
    assert PASSWORD not in str(api.requests[-1].body["messages"])


def test_each_named_file_s_kind_is_read_by_its_rules_and_a_call_naming_none_is_left_alone() -> None:
    code = f'engine = connect(password="{PASSWORD}")\npassword = read_secret()\n'
    blocks = ToolOutput([{"type": "text", "text": code}, {"type": "image", "source": {}}])
    out = without_file_secrets(blocks, {"paths": ["src/helpers.py", "src/db.py"]})
    assert isinstance(out.content, list)
    text = str(out.content[0]["text"])
    assert PASSWORD not in text and "password = read_secret()" in text
    assert out.content[1] == {"type": "image", "source": {}}
    assert without_file_secrets(ToolOutput(f"token: {PASSWORD}"), {"uri": "file:///srv/app/config.yml"}).content \
        == "token: [redacted]"
    page = f"Password: {PASSWORD}"  # a web page's or an issue's text: no file of the project's
    assert without_file_secrets(ToolOutput(page), {"url": "https://example.com", "query": "x"}).content == page


def test_a_file_uri_under_any_argument_is_read_by_the_file_rules_and_a_web_page_s_uri_is_not() -> None:
    """Review of atk21: ``url``/``uris``/``resource_url`` file: URIs were not read by the file rules
    (``password = …`` of settings.ini reached the model), while an ``https`` ``uri`` (a web page) was."""
    config = f"[db]\npassword = {PASSWORD}\n"
    for call in ({"url": "file:///srv/app/settings.ini"}, {"uris": ["file:///srv/app/settings.ini"]},
                 {"resource_url": "file:///srv/app/settings.ini"}):
        assert without_file_secrets(ToolOutput(config), call).content == "[db]\npassword = [redacted]\n", call
    assert without_file_secrets(ToolOutput(config), {"uri": "https://example.com/guide.html"}).content == config


def test_an_embedded_file_resource_is_read_by_its_kind_s_rules_whatever_the_call_named() -> None:
    """Review of atk21: a tool answering a query with the project's files as embedded resources
    (``file:///srv/app/settings.ini``) showed their passwords: only the call's arguments were looked at."""
    import mcp.types as mcp_types

    from nbagent.tools.mcp.results import to_tool_output

    def resource(uri: str, text: str) -> mcp_types.EmbeddedResource:
        return mcp_types.EmbeddedResource(type="resource", resource=mcp_types.TextResourceContents(uri=uri, text=text))

    result = mcp_types.CallToolResult(content=[resource("file:///srv/app/settings.ini", f"[db]\npassword = {PASSWORD}\n"),
                                               resource("file:///srv/app/db.py", "password = read_secret()\n"),
                                               resource("https://example.com/guide", "password = see the admin")])
    text = str(to_tool_output(result).content)
    assert PASSWORD not in text and "password = [redacted]" in text
    assert "password = read_secret()" in text and "password = see the admin" in text
