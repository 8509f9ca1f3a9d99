"""The compaction scan behind the beta header looks only at new messages, and is never fooled by
a conversation that changed instead of growing."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from nbagent.engine.contracts import messages as messages_module
from nbagent.engine.contracts.messages import CompactionScan, first_replaced, has_compaction

COMPACTION = {"role": "assistant", "content": [{"type": "compaction", "content": "summary", "signature": "s"}]}


def text(i: int, role: str = "user") -> dict[str, Any]:
    return {"role": role, "content": [{"type": "text", "text": f"m{i}"}]}


def test_a_growing_conversation_is_scanned_once_and_a_changed_one_again(monkeypatch: Any) -> None:
    scanned: list[int] = []
    real = messages_module.has_compaction

    def counting(ms: Sequence[Mapping[str, object]]) -> bool:
        scanned.append(len(ms))
        return real(ms)

    monkeypatch.setattr(messages_module, "has_compaction", counting)
    scan = CompactionScan()
    history = [text(i) for i in range(50)]
    assert scan(history) is False and scanned == [50]
    history += [COMPACTION, text(51)]
    assert scan(history) is True and scanned[-1] == 2  # only the two new messages
    history.append(text(52))
    assert scan(history) is True and len(scanned) == 2  # found already: nothing to look at
    without = [m for m in history if m is not COMPACTION]  # a different conversation (the block went)
    assert scan(without) is False and scanned[-1] == len(without)
    assert scan(history[:10]) is False  # shorter: scanned again


def test_the_plain_scan_reads_dicts_and_other_mappings() -> None:
    from types import MappingProxyType

    assert has_compaction([{"role": "assistant", "content": [MappingProxyType({"type": "compaction"})]}])
    assert not has_compaction([{"role": "user", "content": "compaction"}, text(1)])


def test_first_replaced_finds_where_a_growing_list_stopped_being_the_one_indexed() -> None:
    a, b, c, d = ({"role": "user", "content": str(i)} for i in range(4))
    indexed = [a, b, c]
    assert first_replaced([a, b, c, d], indexed) is None  # it grew
    assert first_replaced([a, b, c], indexed) is None
    assert first_replaced([a, b], indexed) == 2  # shortened (a rollback)
    assert first_replaced([a, {"role": "user", "content": "x"}, c, d], indexed) == 1  # replaced
    assert first_replaced([a, dict(b), c], indexed) is None  # an equal copy counts as the same message
    assert first_replaced([], indexed) == 0
