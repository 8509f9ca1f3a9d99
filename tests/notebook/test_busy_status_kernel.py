"""The kernel status the front-end shows while an agent cell waits for Allow, on real kernels.

JupyterLab 4.6 sends ``create_subshell_request`` (control) and widget ``comm_msg`` on a subshell
while a cell runs; ipykernel answers each with ``status: busy`` then ``idle``, and the front-end
shows the latest status: "Idle" while the prompt waited. With nbagent the kernel follows each such
idle with ``busy`` for the running agent cell; once the cell is done, nothing is added.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.kernel_driver import KernelDriver


class StatusLog:
    """Every ``status`` message the kernel publishes, in order: (state, parent msg_type, parent msg_id)."""

    def __init__(self, driver: KernelDriver) -> None:
        self.entries: list[tuple[str, str, str]] = []
        original = driver._on_iopub

        def spy(msg: dict[str, Any]) -> None:
            if msg["msg_type"] == "status":
                parent = msg["parent_header"]
                self.entries.append((msg["content"]["execution_state"], parent.get("msg_type", ""),
                                     parent.get("msg_id", "")))
            original(msg)

        driver._on_iopub = spy  # type: ignore[method-assign]


def _subshell_comm_msg(d: KernelDriver) -> str:
    """What JupyterLab sends for a widget while a cell runs: a subshell (control), then a comm_msg on it."""
    msg = d.kc.session.msg("comm_msg", {"comm_id": "no-such-comm", "data": {"method": "update", "state": {}}})
    msg["header"]["subshell_id"] = d.subshell()
    d.kc.shell_channel.send(msg)
    return str(msg["header"]["msg_id"])


def _unfinished(entries: list[tuple[str, str, str]]) -> set[str]:
    """The requests whose last status is busy."""
    last: dict[str, str] = {}
    for state, _type, msg_id in entries:
        last[msg_id] = state
    return {msg_id for msg_id, state in last.items() if state == "busy"}


@pytest.mark.parametrize("kernel_name", ["python3", "nbagent"])
def test_the_kernel_reads_busy_while_an_agent_cell_waits_for_allow(kernel_name, tmp_path):
    d = KernelDriver(kernel_name, cwd=str(tmp_path))
    log = StatusLog(d)
    try:
        d.wait_done(d.execute("%load_ext nbagent"), 60)
        run = d.execute("%%agent\nWhat is 17 * 23?", cell_id="agent-cell")
        allow = d.wait_button("Allow", 90)
        sent = _subshell_comm_msg(d)
        d.wait(lambda: ("idle", "comm_msg", sent) in log.entries, 30, "the comm_msg's idle")
        d.wait(lambda: log.entries[-1][0] == "busy", 10, "busy after the comm_msg's idle")
        ended = log.entries.index(("idle", "comm_msg", sent))
        assert log.entries[ended + 1] == ("busy", "execute_request", run.msg_id), log.entries[ended:]
        # The subshell's own idle (control channel) was followed by busy for the cell too.
        created = max(i for i, e in enumerate(log.entries) if e[:2] == ("idle", "create_subshell_request"))
        assert log.entries[created + 1] == ("busy", "execute_request", run.msg_id), log.entries[created:]

        d.click(allow)
        d.wait_done(run, 90)
        assert "391" in run.text and run.status == "ok"
        # The cell is over: another request's idle is the last word again. (The click, routed to the
        # main shell after the fast path took it, may get its own busy/idle after the cell, before or
        # after the later comm_msg's: each request's pair ends, in its own time.)
        sent = _subshell_comm_msg(d)
        d.wait(lambda: ("idle", "comm_msg", sent) in log.entries, 30, "the later comm_msg's idle")
        d.pump(0.3)
        d.wait(lambda: not _unfinished(log.entries), 30, "every request's idle")
        cell_over = log.entries.index(("idle", "execute_request", run.msg_id))
        assert ("busy", "execute_request", run.msg_id) not in log.entries[cell_over:], log.entries[cell_over:]
        assert log.entries[-1][0] == "idle" and log.entries[-1][2] != run.msg_id, log.entries[-4:]
    finally:
        d.close()
