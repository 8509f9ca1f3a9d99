"""What a client's code or cell ``display()``s reaches the client: ``display(df)`` (how notebooks
show frames inside a loop or before more code) read "(no output)" in ``run_code`` and
``notebook_run``, and a client concluded the code had shown nothing."""

from __future__ import annotations

import pytest

from .served import Served, text

pytestmark = pytest.mark.kernel

CODE = "from IPython.display import display\nprint('rows:')\ndisplay({'region': 'north', 'total': 42})\ndisplay('done')"


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    s = Served(tmp_path_factory.mktemp("serve-displays"))
    yield s
    s.close()


async def test_run_code_returns_what_the_code_displayed(served):
    async with served.client("claude-code") as client:
        out = await served.call(client, "run_code", {"code": CODE}, click="Allow")
    assert not out.is_error, text(out)
    assert "(no output)" not in text(out)
    assert "rows:\n[displayed]\n{'region': 'north', 'total': 42}\n'done'" in text(out)


async def test_notebook_run_returns_what_the_cell_displayed(served):
    async with served.client("claude-code") as client:
        inserted = await served.call(client, "notebook_edit", {"action": "insert", "index": 0, "source": CODE},
                                     click="Allow")
        cell_id = text(inserted).split()[3]
        out = await served.call(client, "notebook_run", {"cell_id": cell_id}, click="Allow")
    assert not out.is_error, text(out)
    assert "'total': 42" in text(out) and "'done'" in text(out)
