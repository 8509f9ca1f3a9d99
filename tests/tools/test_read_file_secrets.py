"""``read_file`` of a project's config or module shows the password it names ``[redacted]``, as a
cell's printed output or a traceback's quoted line already did (attacker pass 20): the file is read
without asking, and ``settings.ini`` is no ``.env``."""

from __future__ import annotations

from pathlib import Path

from nbagent.engine.contracts.tool_api import ToolContext
from nbagent.tools.files import ReadFile

PASSWORD = "Zq7-Loud-Tiger-42"


async def _read(tmp_path: Path, name: str, text: str, **kw: int) -> str:
    (tmp_path / name).write_text(text)
    out = await ReadFile().run({"path": name, **kw}, ToolContext(cwd=tmp_path, turn=1))
    assert isinstance(out.content, str)
    return out.content


async def test_a_config_file_s_password_lines_are_redacted(tmp_path: Path) -> None:
    ini = await _read(tmp_path, "settings.ini", f"[db]\nhost = db.internal\nuser = ana\npassword = {PASSWORD}\n")
    compose = await _read(tmp_path, "docker-compose.yml",
                          f"services:\n  db:\n    environment:\n      POSTGRES_PASSWORD: {PASSWORD}\n")
    config = await _read(tmp_path, "config.json", f'{{"db": {{"user": "ana", "password": "{PASSWORD}"}}}}')
    for text in (ini, compose, config):
        assert PASSWORD not in text and "[redacted]" in text
    assert "host = db.internal" in ini and "user = ana" in ini


async def test_a_module_s_named_literal_is_redacted_and_its_code_kept(tmp_path: Path) -> None:
    text = await _read(tmp_path, "helpers.py", "import psycopg2\n\ndef conn():\n    password = read_secret()\n"
                                               f'    return psycopg2.connect(host="db", password="{PASSWORD}")\n')
    assert PASSWORD not in text and 'password="[redacted]"' in text
    assert "password = read_secret()" in text  # code, not a value


async def test_a_line_range_is_redacted_too_and_plain_files_are_unchanged(tmp_path: Path) -> None:
    ranged = await _read(tmp_path, "app.cfg", f"a = 1\npassword: {PASSWORD}\nb = 2\n", offset=2, limit=1)
    assert PASSWORD not in ranged
    plain = await _read(tmp_path, "data.csv", "name,amount\nana,12\nbob,7\n")
    assert plain.endswith("name,amount\nana,12\nbob,7\n")


async def test_another_notebook_s_cell_and_output_secrets_are_redacted(tmp_path: Path) -> None:
    """A notebook file holds its cells as JSON strings (``db_password = \\"…\\"``), which no rule read:
    read_file of the project's ``setup.ipynb`` showed the password of its cell and of a printed .env."""
    import json

    cells = [{"cell_type": "code", "source": ["import psycopg2\n", f'db_password = "{PASSWORD}"\n'], "metadata": {},
              "outputs": [{"output_type": "stream", "name": "stdout", "text": ["API_TOKEN=tk_4fT9xQ2mLp8ZrW1vNc7YhK3s\n"]}],
              "execution_count": 1}]
    notebook = json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1)
    text = await _read(tmp_path, "setup.ipynb", notebook)
    assert PASSWORD not in text and "tk_4fT9xQ2mLp8ZrW1vNc7YhK3s" not in text
    assert 'db_password = \\"[redacted]\\"' in text and "import psycopg2" in text


async def test_a_notebook_s_last_lines_without_newline_are_redacted(tmp_path: Path) -> None:
    """Review of atk20: a cell's last source line and an output's last text line carry no newline;
    their decoded JSON strings ran into the next one (``…source``), so the found value was not the
    file's and the password stayed."""
    import json

    cells = [{"cell_type": "code", "execution_count": 1, "id": "a", "metadata": {},
              "outputs": [{"name": "stdout", "output_type": "stream", "text": ["DB_PASSWORD=Hn4-Quiet-River-77"]}],
              "source": ["import os\n", f'db_password = "{PASSWORD}"']},
             {"cell_type": "code", "execution_count": 2, "id": "b", "metadata": {}, "outputs": [], "source": ["x = 1"]}]
    notebook = json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1)
    text = await _read(tmp_path, "setup.ipynb", notebook)
    assert PASSWORD not in text and "Hn4-Quiet-River-77" not in text and "x = 1" in text


async def test_a_password_with_an_inline_comment_is_redacted_and_the_comment_kept(tmp_path: Path) -> None:
    """A YAML or dotenv value followed by a comment (``password: "…"  # rotated monthly``) gave no
    value when quoted, so ``read_file`` of ``config.yaml`` showed the password; unquoted, the comment
    was taken as part of the password (and hidden with it)."""
    yaml = await _read(tmp_path, "config.yaml", f'db:\n  host: db.internal\n  password: "{PASSWORD}"  # rotated monthly\n')
    env = await _read(tmp_path, "app.env", f"DB_PASSWORD={PASSWORD} # prod\nAPI_TOKEN='tk_4fT9xQ2mLp8ZrW1vNc7Y' # ci\n")
    ini = await _read(tmp_path, "db.ini", f"[db]\npassword = '{PASSWORD}' ; prod\n")
    for text in (yaml, env, ini):
        assert PASSWORD not in text and "[redacted]" in text, text
    assert "tk_4fT9xQ2mLp8ZrW1vNc7Y" not in env
    assert "# rotated monthly" in yaml and "# prod" in env and "; prod" in ini
