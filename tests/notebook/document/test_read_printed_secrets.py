"""``notebook_read`` (the model's, unasked; a ``%agent serve`` client's) redacts what a cell printed
under a credential's name when no variable holds it: ``!cat .env``, ``print(open("settings.ini").read())``
or a config printed as a dict showed ``DB_PASSWORD=…`` to the model, while ``read_file`` of that
``.env`` asks (attacker pass 15)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from nbagent.engine.contracts.tool_api import ToolContext
from nbagent.engine.loop.sanitize import Sanitizer
from nbagent.notebook.document.bridge import Bridge
from nbagent.notebook.document.tools import NotebookTools

from .fake_frontend import FakeFrontEnd

KEY = "Qm3xT9vL2pR7wK4nB8cF1hJ6dS5gA0eY"
DOTENV = f"DB_HOST=db.internal\nDB_PASSWORD=S3cr3t-Pw-2024\nexport OPENAI_API_KEY='{KEY}'\nSORT_KEY=order_date\n"


async def _read(outputs: list[dict[str, Any]], tmp_path: Path) -> str:
    front = FakeFrontEnd([{"cell_type": "code", "source": "!cat .env", "outputs": outputs}])
    read = {t.name: t for t in NotebookTools(front.connect(Bridge()), lambda: "S1").tools()}["notebook_read"]
    out = await read.run({}, ToolContext(cwd=tmp_path, tool_use_id="t", redact=Sanitizer(()).redact))
    return out.content if isinstance(out.content, str) else str(out.content[0].get("text"))


async def test_a_printed_dotenv_file_is_read_without_its_secrets(tmp_path: Path) -> None:
    text = await _read([{"output_type": "stream", "name": "stdout", "text": DOTENV}], tmp_path)
    assert "S3cr3t-Pw-2024" not in text and KEY not in text
    assert "DB_HOST=db.internal" in text and "SORT_KEY=order_date" in text and "DB_PASSWORD=[redacted]" in text


async def test_a_printed_config_dict_is_read_without_its_password(tmp_path: Path) -> None:
    shown = "{'host': 'db.internal', 'password': 'S3cr3t-Pw-2024', 'port': 5432}"
    text = await _read([{"output_type": "execute_result", "data": {"text/plain": shown}, "metadata": {},
                         "execution_count": 1}], tmp_path)
    assert "S3cr3t-Pw-2024" not in text and "'host': 'db.internal'" in text


def test_a_long_line_of_blanks_is_read_in_linear_time() -> None:
    """A lazy value with trailing blanks took quadratic time (2.4 s for 16 KB): a received notebook's
    output could stall every read of it."""
    import time

    from nbagent.engine.credentials.output_secrets import output_secrets

    text = "db_password=b" + " " * 150_000 + "x\n" + "api_key: " + " " * 40_000
    started = time.perf_counter()
    assert output_secrets(text) == ()
    assert time.perf_counter() - started < 0.5


def test_a_printed_path_or_setting_under_a_credentials_name_is_no_secret():
    from nbagent.engine.credentials.output_secrets import output_secrets

    printed = ("TOKEN_DIR=/srv/cache/tokens\nAPI_KEY_FILE=./conf/key.json\nDB_PASSWORD=Tr0ub4dor&3x\n"
               "MAPBOX_TOKEN=letmein-dev-2024\n")  # a credential's name: whatever the value but a path
    assert output_secrets(printed) == ("letmein-dev-2024", "Tr0ub4dor&3x")
