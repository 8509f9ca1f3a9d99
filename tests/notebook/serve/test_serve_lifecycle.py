"""The server's life: on the nbagent kernel with clicks on a subshell (as JupyterLab 4.6 sends
them), the panel after ``--stop``, and the end of the server with the kernel's shutdown."""

from __future__ import annotations

import httpx2
import pytest

from .served import Served, text

pytestmark = pytest.mark.kernel


async def test_the_nbagent_kernel_asks_and_runs_with_clicks_on_a_subshell(tmp_path):
    served = Served(tmp_path, kernel_name="nbagent", subshell_clicks=True)
    try:
        async with served.client("cursor") as client:
            ran = await served.call(client, "run_code", {"code": "import os\nos.getpid() > 0"}, click="Allow")
            assert not ran.is_error and "True" in text(ran)
            await served.call(client, "notebook_read", {"outputs": False})
            moved = await served.call(client, "notebook_edit", {"action": "move", "cell_id": "c2", "index": 0},
                                      click="Allow")
        assert not moved.is_error, text(moved)
        assert [c["id"] for c in served.cells()] == ["c2", "c1", "serve-cell"]
        served.run("%agent serve --stop")
        assert "stopped serving analysis.ipynb" in served.html()  # the panel says so in the serve cell
    finally:
        served.close()


async def test_the_kernels_shutdown_ends_the_server_and_removes_the_token(tmp_path):
    served = Served(tmp_path)
    try:
        assert served.token_file.exists()
        served.d.kc.stop_channels()
        served.d.km.shutdown_kernel(now=False)  # a shutdown_request, as Jupyter's "Shut Down Kernel" sends
        assert not served.token_file.exists()
        async with httpx2.AsyncClient(timeout=5) as http:
            with pytest.raises(httpx2.TransportError):
                await http.post(served.url, headers={"Authorization": f"Bearer {served.token}"}, json={})
    finally:
        if served.d.km.is_alive():
            served.d.km.shutdown_kernel(now=True)
