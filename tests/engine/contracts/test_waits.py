"""``within``: a bounded wait that never loses the caller's cancellation (■ in a notebook)."""

from __future__ import annotations

import asyncio
import sys
from typing import Any, Awaitable, Callable

import pytest

from nbagent.engine.contracts.waits import within, within_task

Wait = Callable[[Awaitable[Any], float], Awaitable[Any]]


async def _ready() -> int:
    return 1


async def _cancelled_as_the_kernel_cancels(wait: Wait) -> list[int]:
    """The awaited result and the cancellation land in one loop turn: ipykernel's SIGINT handler
    schedules a callback that cancels the cell's task a turn later, while the cell waits on tool
    sources that are ready at once."""
    loop, me = asyncio.get_running_loop(), asyncio.current_task()
    assert me is not None
    loop.call_soon(lambda: loop.call_soon(me.cancel))
    return list(await wait(asyncio.gather(_ready()), 5))


@pytest.mark.parametrize("wait", [within, within_task], ids=["within", "within_task"])
def test_a_cancellation_in_the_turn_the_result_comes_is_never_lost(wait: Wait) -> None:
    async def main() -> None:
        with pytest.raises(asyncio.CancelledError):
            await asyncio.create_task(_cancelled_as_the_kernel_cancels(wait))

    asyncio.run(main())


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="wait_for is asyncio.timeout from Python 3.12")
def test_wait_for_of_this_python_loses_that_cancellation() -> None:
    """Why ``within`` exists: the same interleaving through ``asyncio.wait_for`` returns the result."""
    async def main() -> list[int]:
        return await asyncio.create_task(_cancelled_as_the_kernel_cancels(asyncio.wait_for))

    assert asyncio.run(main()) == [1]


@pytest.mark.parametrize("wait", [within, within_task], ids=["within", "within_task"])
def test_a_wait_past_its_limit_cancels_what_it_awaited_and_times_out(wait: Wait) -> None:
    ended: list[str] = []

    async def forever() -> list[int]:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            ended.append("cancelled")
            raise
        return []

    async def main() -> None:
        with pytest.raises(asyncio.TimeoutError):
            await wait(forever(), 0.01)

    asyncio.run(main())
    assert ended == ["cancelled"]  # ended before the timeout was raised, as wait_for's does


@pytest.mark.parametrize("wait", [within, within_task], ids=["within", "within_task"])
def test_a_wait_in_time_returns_the_result_and_a_failure_raises_it(wait: Wait) -> None:
    async def fails() -> list[int]:
        raise ValueError("broken source")

    async def main() -> None:
        assert list(await wait(asyncio.gather(_ready(), _ready()), 5)) == [1, 1]
        with pytest.raises(ValueError, match="broken source"):
            await wait(fails(), 5)

    asyncio.run(main())


@pytest.mark.parametrize("wait", [within, within_task], ids=["within", "within_task"])
def test_a_cancelled_caller_goes_on_once_what_it_awaited_has_cleaned_up(wait: Wait) -> None:
    steps: list[str] = []

    async def with_cleanup() -> None:
        try:
            await asyncio.Event().wait()
        finally:
            await asyncio.sleep(0)  # a cleanup that itself awaits (closing a connection)
            steps.append("cleaned up")

    async def caller() -> None:
        try:
            await wait(with_cleanup(), 5)
        finally:
            steps.append("caller goes on")

    async def main() -> None:
        task = asyncio.create_task(caller())
        await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert steps == ["cleaned up", "caller goes on"]
