"""The kernel's interrupt handling, in process: once a cell's code is over, an interrupt sets the
registered aborts and raises nothing into ipykernel's reply code (which would lose the reply)."""

from __future__ import annotations

import asyncio
import signal
from typing import Any

import pytest

from nbagent.notebook import aborts


@pytest.fixture(scope="module")
def kernel_class() -> Any:
    """``NbAgentKernel``, imported without its side effect: importing ``ipykernel.ipkernel``
    replaces ``comm.create_comm`` process-wide, and later widget tests need the default comms."""
    import comm

    saved = comm.create_comm, comm.get_comm_manager
    try:
        from nbagent.kernel.kernel import NbAgentKernel
    finally:
        comm.create_comm, comm.get_comm_manager = saved
    return NbAgentKernel


async def test_an_interrupt_after_the_cells_code_sets_the_aborts_and_raises_nothing(kernel_class: Any) -> None:
    kernel = kernel_class.__new__(kernel_class)  # no sockets: only the signal handling is used
    before = signal.getsignal(signal.SIGINT)
    hits: list[str] = []
    try:
        cell = asyncio.get_running_loop().create_future()
        cell.set_result(None)  # the cell's code has finished
        with kernel._cancel_on_sigint(cell):
            pass
        # Until post_handler_hook restores the idle handler, ipykernel builds and sends the reply.
        with aborts.abort_scope(lambda: hits.append("abort")):
            signal.raise_signal(signal.SIGINT)  # a KeyboardInterrupt here would fail the test
        assert hits == ["abort"]
    finally:
        signal.signal(signal.SIGINT, before)


def test_an_interrupt_during_a_synchronous_cell_still_raises(kernel_class: Any) -> None:
    """pre_handler_hook's handler: the aborts first, then KeyboardInterrupt into the user's code."""
    kernel = kernel_class.__new__(kernel_class)
    before = signal.getsignal(signal.SIGINT)
    hits: list[str] = []
    try:
        kernel.pre_handler_hook()
        with aborts.abort_scope(lambda: hits.append("abort")):
            try:
                signal.raise_signal(signal.SIGINT)
            except KeyboardInterrupt:
                hits.append("KeyboardInterrupt")
        assert hits == ["abort", "KeyboardInterrupt"]
    finally:
        signal.signal(signal.SIGINT, before)
