"""The busy hold's ordering, without a kernel: a request that ends on another thread (the control
channel, a subshell) just as the agent cell ends must not say "busy" for the cell after the cell's
own idle (the front-end would read the kernel Busy after the cell, until some other message)."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from nbagent.notebook import busy

CELL = {"header": {"msg_id": "cell", "msg_type": "execute_request"}}
CLICK = {"header": {"msg_id": "click", "msg_type": "comm_msg"}}


class FakeKernel:
    """What BusyHold touches of ipykernel's Kernel: per-channel parents and ``_publish_status``."""

    def __init__(self) -> None:
        self.published: list[tuple[str, object]] = []

    def get_parent(self, channel: str) -> dict[str, Any]:
        return CELL

    def _publish_status(self, status: str, channel: str, parent: object = None) -> None:
        self.published.append((status, busy._msg_id(parent)))


class CellEndsOnRelease:
    """``busy._lock`` whose first release (armed) lets the cell end at that very moment, as the
    kernel's main thread would if the thread publishing another request's idle lost the CPU there."""

    def __init__(self, kernel: FakeKernel, hold: busy.BusyHold) -> None:
        self.real, self.kernel, self.hold = threading.Lock(), kernel, hold
        self.armed = False

    def __enter__(self) -> None:
        self.real.acquire()

    def __exit__(self, *exc: object) -> None:
        self.real.release()
        if self.armed:
            self.armed = False
            self.hold.stop()  # the cell's code returns: the hold ends
            self.kernel.published.append(("idle", "cell"))  # then ipykernel's idle for the cell


def test_another_requests_idle_as_the_cell_ends_leaves_no_busy_after_the_cells_idle(monkeypatch: pytest.MonkeyPatch) -> None:
    kernel = FakeKernel()
    monkeypatch.setattr(busy, "_kernel", lambda: kernel)
    monkeypatch.setattr(busy, "_running", [])
    hold = busy.BusyHold()
    lock = CellEndsOnRelease(kernel, hold)
    monkeypatch.setattr(busy, "_lock", lock)
    hold.start()
    kernel._publish_status("idle", "control", CLICK)  # the hold answers it with busy for the cell
    assert kernel.published[-2:] == [("idle", "click"), ("busy", "cell")]

    lock.armed = True
    kernel._publish_status("idle", "control", CLICK)  # a later request ends just as the cell does
    cell_over = kernel.published.index(("idle", "cell"))
    assert ("busy", "cell") not in kernel.published[cell_over:], kernel.published


class OtherThreadEndsDuringIdle(FakeKernel):
    """A kernel whose control thread publishes its idle (and the hold's busy) while a subshell's idle
    is being published: the two threads' statuses interleave as ipykernel's threads can."""

    def __init__(self) -> None:
        super().__init__()
        self.wrapped: Any = None
        self.other: threading.Thread | None = None
        self.went_on = threading.Event()  # the other thread published, or waits for the hold's lock

    def _publish_status(self, status: str, channel: str, parent: object = None) -> None:
        super()._publish_status(status, channel, parent)
        if parent is OTHER:
            self.went_on.set()
        if (status, parent) == ("idle", CLICK) and self.other is None:
            self.other = threading.Thread(target=self.wrapped, args=("idle", "control", OTHER))
            self.other.start()
            self.went_on.wait()  # done at once, unless the pair in progress holds it off


class TellsWhenWaitedFor:
    """The hold's lock, telling ``kernel`` when a thread other than its holder asks for it."""

    def __init__(self, kernel: OtherThreadEndsDuringIdle) -> None:
        self.kernel, self.lock = kernel, threading.Lock()

    def __enter__(self) -> None:
        if not self.lock.acquire(blocking=False):
            self.kernel.went_on.set()
            self.lock.acquire()

    def __exit__(self, *_: object) -> None:
        self.lock.release()


OTHER = {"header": {"msg_id": "other", "msg_type": "create_subshell_request"}}


def test_every_other_requests_idle_is_followed_at_once_by_busy_for_the_cell(monkeypatch: pytest.MonkeyPatch) -> None:
    kernel = OtherThreadEndsDuringIdle()
    monkeypatch.setattr(busy, "_kernel", lambda: kernel)
    monkeypatch.setattr(busy, "_running", [])
    monkeypatch.setattr(busy, "_lock", TellsWhenWaitedFor(kernel))
    hold = busy.BusyHold().start()
    kernel.wrapped = kernel._publish_status  # the hold's wrapper, as the other thread calls it
    kernel._publish_status("idle", "subshell", CLICK)
    assert kernel.other is not None
    kernel.other.join()
    hold.stop()
    assert kernel.published == [("busy", "cell"), ("idle", "click"), ("busy", "cell"),
                                ("idle", "other"), ("busy", "cell")], kernel.published
