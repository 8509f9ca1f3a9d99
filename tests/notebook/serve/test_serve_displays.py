"""What a client's code or cell ``display()``s reaches the client, its images bounded: ``display(df)`` (how notebooks
show frames inside a loop or before more code) read "(no output)" in ``run_code`` and
``notebook_run``, and a client concluded the code had shown nothing."""

from __future__ import annotations

import base64
import io

import pytest
from PIL import Image as PILImage

from nbagent.notebook.document.images import MAX_IMAGE_BYTES, MAX_IMAGE_EDGE

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


async def test_a_large_image_run_code_displayed_is_sent_bounded_as_notebook_reads_are(served):
    """An 18 MB PNG a client's code displayed went to the client whole (notebook_read bounds a
    cell's images to MAX_IMAGE_BYTES and MAX_IMAGE_EDGE, run_code did not): its next model request,
    at most 5 MB per image, could not carry it."""
    code = ("import io, numpy as np\nfrom PIL import Image as P\nfrom IPython.display import Image, display\n"
            "b = io.BytesIO(); P.fromarray((np.random.default_rng(0).random((2000, 2000, 3)) * 255)"
            ".astype('uint8')).save(b, 'PNG')\ndisplay(Image(data=b.getvalue(), format='png'))\nlen(b.getvalue())")
    async with served.client("claude-code") as client:
        out = await served.call(client, "run_code", {"code": code}, click="Allow")
    assert not out.is_error, text(out)
    images = [base64.b64decode(b.data) for b in out.content if b.type == "image"]
    assert int(text(out).split("[result]\n")[1].split()[0]) > MAX_IMAGE_BYTES  # the code made a large one
    assert len(images) == 1 and len(images[0]) <= MAX_IMAGE_BYTES
    assert "2000×2000 px" in text(out) and "sent downscaled to" in text(out)
    assert max(PILImage.open(io.BytesIO(images[0])).size) <= MAX_IMAGE_EDGE
