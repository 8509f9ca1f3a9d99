"""Where a fleet's items run: a local process pool, or a Ray cluster (``--ray ADDRESS``).

Both take :func:`~.worker.run_item` and :class:`~.item.ItemSpec` (plain data) and hand back its
result dict; the fleet's scheduling, budget and table are the same whichever runs them.
"""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing
from typing import Protocol

from .item import ItemRow, ItemSpec
from .worker import run_item


class Pool(Protocol):
    """Runs items; :meth:`wait` returns finished handles and their results (or exceptions)."""

    def submit(self, spec: ItemSpec) -> object: ...

    def wait(self, handles: list[object]) -> list[tuple[object, ItemRow | BaseException]]: ...

    def close(self, cancel: bool = False) -> None: ...


class LocalPool:
    """``jobs`` worker processes on this machine (spawned: a fresh interpreter per worker)."""

    def __init__(self, jobs: int) -> None:
        self._pool = cf.ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("spawn"))

    def submit(self, spec: ItemSpec) -> object:
        return self._pool.submit(run_item, spec)

    def wait(self, handles: list[object]) -> list[tuple[object, ItemRow | BaseException]]:
        futures = [h for h in handles if isinstance(h, cf.Future)]  # all of them: what submit returned
        done, _ = cf.wait(futures, return_when=cf.FIRST_COMPLETED)
        return [(h, h.exception() or h.result()) for h in done]

    def close(self, cancel: bool = False) -> None:
        self._pool.shutdown(wait=not cancel, cancel_futures=cancel)


class RayPool:
    """The same items as Ray tasks on the cluster at ``address`` (``local``: a Ray instance started
    here). Needs the ``ray`` extra (``pip install 'nbagent[ray]'``)."""

    def __init__(self, address: str) -> None:
        try:
            import ray
        except ImportError as exc:
            raise SystemExit("--ray needs Ray: pip install 'nbagent[ray]'") from exc
        self._ray = ray
        if not ray.is_initialized():
            if address == "local":
                # A local instance binds loopback only: nothing of a laptop's or CI's run leaves the machine.
                ray.init(address=None, include_dashboard=False, log_to_driver=False, configure_logging=False,
                         _node_ip_address="127.0.0.1")
            else:
                ray.init(address=address, include_dashboard=False, log_to_driver=False, configure_logging=False)
        self._remote = ray.remote(run_item)

    def submit(self, spec: ItemSpec) -> object:
        return self._remote.remote(spec)

    def wait(self, handles: list[object]) -> list[tuple[object, ItemRow | BaseException]]:
        ready, _ = self._ray.wait(handles, num_returns=1)
        out: list[tuple[object, ItemRow | BaseException]] = []
        for h in ready:
            try:
                out.append((h, self._ray.get(h)))
            except Exception as exc:  # noqa: BLE001 - a lost worker is that item's failure
                out.append((h, exc))
        return out

    def close(self, cancel: bool = False) -> None:
        self._ray.shutdown()
