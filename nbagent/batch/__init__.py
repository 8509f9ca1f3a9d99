"""Fleet runs: one prompt over many notebooks or data files (``python -m nbagent.batch``).

See :mod:`.fleet` for scheduling and the budget, :mod:`.item` and :mod:`.worker` for one item's run and its
resumable task folder, :mod:`.pools` for where items run (local processes or Ray).
"""

from __future__ import annotations

from .fleet import Fleet, table
from .item import ItemResult, ItemSpec
from .worker import run_item

__all__ = ["Fleet", "ItemResult", "ItemSpec", "run_item", "table"]
