"""Where the mask layer's next masking starts, and the one-hour cache anchors a request gets from
it: the rule is masking's own (what it may clear), mapped to the messages a request sends."""

from __future__ import annotations

from nbagent.engine.context.mask import mask_old_results, next_masking_start
from nbagent.engine.context.updates import ContextHistoryUpdates, EditType
from nbagent.engine.contracts.config import SessionConfig
from nbagent.engine.contracts.context_policy import ContextPolicy, LayerOptions
from nbagent.engine.contracts.messages import MessageParam, ToolResultContent
from nbagent.engine.loop.request_context import mask_anchors
from nbagent.engine.loop.request_run import Reread


def history(results: list[tuple[str, str | list[ToolResultContent]]]) -> list[MessageParam]:
    """A task and its first reply, then per (tool, content) a call and its result."""
    out: list[MessageParam] = [{"role": "user", "content": [{"type": "text", "text": "task"}]}]
    for k, (tool, content) in enumerate(results):
        out.append({"role": "assistant", "content": [{"type": "tool_use", "id": f"t{k}", "name": tool, "input": {}}]})
        out.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{k}", "content": content}]})
    return out


BIG = "rows " * 3000


def test_the_next_masking_starts_at_the_oldest_result_not_yet_cleared() -> None:
    h = history([("load", BIG)] * 6)
    updates = ContextHistoryUpdates()
    assert next_masking_start(h, updates, None, LayerOptions()) == 2
    done = mask_old_results(h, updates, None, LayerOptions(keep=3, clear=1000), 1.0, None)
    assert done is not None and done.first_message == 2 and done.results == 3
    assert next_masking_start(h, updates, None, LayerOptions()) == 8  # after the three placeholders


def test_results_masking_never_clears_do_not_hold_the_start_back() -> None:
    image: list[ToolResultContent] = [{"type": "image", "source": {
        "type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}]
    h = history([("read", BIG), ("plot", image), ("read_file", BIG), ("load", BIG), ("load", BIG)])
    updates = ContextHistoryUpdates()
    updates.add(6, 0, 1.0, "[file read replaced: the newer read below]", edit_type=EditType.READ_FILE_TOOL)
    # Excluded tools, a result without text (nothing to clear) and a replaced file read are skipped.
    assert next_masking_start(h, updates, None, LayerOptions(exclude=("read",))) == 8


def test_anchors_sit_before_both_starts_in_sent_positions_within_the_limit() -> None:
    h = history([("load", BIG)] * 10)
    updates = ContextHistoryUpdates()
    config = SessionConfig(context="mask:keep=3:clear=1000")
    assert isinstance(config.context, ContextPolicy)  # stored parsed
    mask_old_results(h, updates, None, config.context.options, 1.0, None)  # clears results 1-7 of 10
    start = next_masking_start(h, updates, None, config.context.options)
    assert start == 16
    assert mask_anchors(config, h, updates, None, len(h), None) == (15,)
    assert mask_anchors(config, h, updates, None, len(h), Reread(2, None)) == (1, 15)
    # With messages 2-5 hidden, every history index after them sits four places earlier.
    assert mask_anchors(config, h, updates, (2, 5), len(h) - 4, Reread(8, (2, 5))) == (3, 11)
    assert mask_anchors(config, h, updates, (2, 5), len(h) - 4, Reread(8, None)) == (11,)  # the range moved
    assert mask_anchors(config, h, updates, None, 17, None) == ()  # among the last three: none
    assert mask_anchors(SessionConfig(context="cline"), h, updates, None, len(h), None) == ()
