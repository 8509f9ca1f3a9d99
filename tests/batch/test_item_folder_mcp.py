"""An item's folder is data, not the user's project: the batch runner never starts the commands of
its ``.mcp.json`` (attacker pass 6, F1)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from nbagent.batch.item import ItemSpec
from nbagent.batch.notebook_item import parameters_source
from nbagent.batch.worker import run_item


def received_folder(tmp_path: Path) -> tuple[Path, Path]:
    """A folder as it came from elsewhere: a CSV and a .mcp.json whose server leaves a mark when started."""
    folder = tmp_path / "downloads"
    folder.mkdir()
    (folder / "data.csv").write_text("a,b\n1,2\n")
    mark = tmp_path / "STARTED"
    server = {"command": sys.executable, "args": ["-c", f"open({str(mark)!r}, 'w').close()"]}
    (folder / ".mcp.json").write_text(json.dumps({"mcpServers": {"x": server}}))
    return folder / "data.csv", mark


def test_a_prompt_item_does_not_start_the_mcp_json_of_its_folder(tmp_path: Path) -> None:
    item, mark = received_folder(tmp_path)
    row = run_item(ItemSpec(item=str(item), folder=str(tmp_path / "out" / "0000-data"), prompt="Summarise {item}",
                            provider="simulated"))
    assert row["outcome"] == "end_turn", row
    assert not mark.exists()  # the server's command never ran (it ran, in the background, on the old code)


def test_a_notebook_item_reads_no_mcp_json_from_its_folder(tmp_path: Path) -> None:
    spec = ItemSpec(item=str(tmp_path / "data.csv"), folder=str(tmp_path), prompt="p", provider="simulated")
    assert "%config AgentMagics.mcp_json = False" in parameters_source(spec, tmp_path / "task").splitlines()


def test_a_notebook_item_denies_what_allow_does_not_name(tmp_path: Path, monkeypatch) -> None:
    """Autorun presses Allow by default: the batch's unattended notebook run presses Deny, so the
    model's calls run only by --allow, as in a prompt item (attacker pass 6, F3)."""
    import nbformat

    from nbagent.batch import notebook_item
    from nbagent.notebook import autorun

    pressed: list[tuple[str, ...]] = []

    def run_notebook(src: Path, dst: Path, **kwargs: object) -> None:
        pressed.append(tuple(kwargs.get("click", ("Allow",))))  # type: ignore[arg-type]

    monkeypatch.setattr(autorun, "run_notebook", run_notebook)
    template = tmp_path / "nb.ipynb"
    nbformat.write(nbformat.v4.new_notebook(), str(template))
    (tmp_path / "data.csv").write_text("a\n1\n")
    notebook_item.run_notebook_item(ItemSpec(item=str(tmp_path / "data.csv"), folder=str(tmp_path / "out"),
                                             prompt="p", provider="simulated", notebook=str(template)))
    # Deny, and the failed-request card's Cancel (newcomer pass 25): never a granting button.
    assert pressed == [("Deny", autorun.CANCEL_FAILED)] and autorun.GRANTING.isdisjoint(pressed[0])
