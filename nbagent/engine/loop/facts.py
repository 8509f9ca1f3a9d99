"""What the model is told about the live kernel, and how it travels.

The facts (user variables, recent inputs, the last error and recent outputs) go in the newest
user message, not the system prompt, so the cached prefix of the conversation survives a changed
variable; after the first full snapshot only the change is sent when that is shorter.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, NamedTuple, Protocol, Sequence, Union, runtime_checkable

from ..context.window import start_of_rest
from ..contracts.config import DEFAULT_KERNEL_CONTEXT_TOKENS
from ..contracts.messages import ContentBlock, ImageBlockParam, Message, TextBlockParam, first_replaced, is_text, is_tool_use


@dataclass(frozen=True)
class VariableInfo:
    """A user variable as the model is told about it: name, type and a short shape/summary.

    ``detail`` holds further lines, each indented by four spaces (a frame's columns with their
    dtypes, missing counts and levels, sample rows): the first line keeps its parseable form."""

    name: str
    type: str
    summary: str = ""
    detail: str = ""


class NotebookState(NamedTuple):
    """What a notebook tells the loop before each prompt (the notebook layer builds it)."""

    variables: Sequence[VariableInfo]
    inputs: Sequence[str]
    last_error: str | None = None
    """The last failed cell: ``In[n]``, the exception and the last frames of its traceback."""
    outputs: Sequence[str] = ()
    """Text outputs of the last few cells, each ``Out[n]: ...``, bounded."""
    left_out: str = ""
    """One line naming what the kernel context's budget left out (the model can ask for it)."""
    images: Sequence[TextBlockParam | ImageBlockParam] = ()
    """Images a cell displayed that the prompt is about (sent with this prompt only)."""
    left_out_names: Sequence[str] = ()
    """The variables ``left_out`` stands for: still in the kernel, so a change never calls them removed."""


@dataclass(frozen=True)
class FactsFocus:
    """What a prompt is about, for a facts builder that ranks what it tells: the prompt's words,
    the code the agent ran lately (tool inputs), and the budget in tokens."""

    prompt: str = ""
    agent_code: tuple[str, ...] = ()
    token_budget: int = DEFAULT_KERNEL_CONTEXT_TOKENS
    images_seen: frozenset[int] = frozenset()
    """``hash()`` of the base64 data of each image the model still sees in the prompts' messages
    (an image sent before a rollback, or hidden by truncation, is not in it: it is sent again)."""
    redact: Callable[[str], str] | None = None
    """The request's redaction of secrets: an image whose drawn text holds one (a plot titled with
    a key, tick labels of tokens) is left out, as pixels cannot be redacted."""


@runtime_checkable
class FocusedKernelFacts(Protocol):
    """A kernel-facts callable that also takes the prompt's focus (the notebook's builder)."""

    def __call__(self) -> NotebookState: ...

    def focused(self, focus: FactsFocus) -> NotebookState: ...


@runtime_checkable
class KernelSecrets(Protocol):
    """Kernel facts that also name the secrets the kernel holds (the notebook's: its variables
    named as credentials), redacted from every request of a run as configured secrets are."""

    def secrets(self) -> tuple[str, ...]: ...


def kernel_secrets(kernel_facts: object) -> tuple[str, ...]:
    """What ``kernel_facts`` names as secrets (none, when it names none or cannot read them: a
    namespace a thread changes while it is read must not fail the prompt)."""
    if not isinstance(kernel_facts, KernelSecrets):
        return ()
    try:
        return tuple(kernel_facts.secrets())
    except Exception:  # noqa: BLE001 - the redaction of the environment's and configured secrets still holds
        return ()


KernelState = Union[tuple[Sequence[VariableInfo], Sequence[str]], NotebookState]
"""What kernel facts return: (variables, inputs) or a :class:`NotebookState`."""
KernelFacts = Callable[[], KernelState]
"""Returns the kernel's state for the newest prompt: (variables, inputs) or a :class:`NotebookState`
(a :class:`FocusedKernelFacts` gets the prompt's :class:`FactsFocus` too)."""
MAX_VARIABLES = 50
MAX_INPUTS = 5
MAX_INPUT_CHARS = 500
MAX_OUTPUTS = 3
MAX_OUTPUT_CHARS = 2_000
MAX_ERROR_CHARS = 3_000
FACTS_TAG = "kernel-state"


def _variable_line(v: VariableInfo) -> str:
    line = f"  - {v.name}: {v.type}" + (f" ({v.summary})" if v.summary else "")
    return f"{line}\n{v.detail}" if v.detail else line


def _input_lines(inputs: Sequence[str]) -> list[str]:
    return ["  ```python\n  " + src.strip()[:MAX_INPUT_CHARS].replace("\n", "\n  ") + "\n  ```" for src in inputs]


def _bounded(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit // 2] + "\n... [cut] ...\n" + text[-limit // 2:]


def _error_and_output_lines(last_error: str | None, outputs: Sequence[str]) -> list[str]:
    lines = []
    if last_error:
        lines += ["Last error (the user may ask about it):", "  " + last_error.strip().replace("\n", "\n  ")]
    if outputs:
        lines += ["Recent cell outputs (newest last; ask the python tool for Out[n] to see more):",
                  *("  " + o.strip().replace("\n", "\n  ") for o in outputs)]
    return lines


def _ran_since(before: Sequence[str], now: Sequence[str]) -> list[str]:
    """The cells run since ``before`` was told: ``now`` is the window of recent cells slid on, so it is
    ``before`` less its oldest cells, then the new runs. By position, not by text: a cell run again
    (``sales = pd.read_csv(...)`` after the file changed) is news although its text was told (a frame's
    summary may read the same: the model then had no sign that its last answer may be stale). A window
    whose texts are all as before (the same five cells run again in order) cannot tell, and says nothing."""
    for start in range(len(before)):
        kept = len(before) - start
        if tuple(now[:kept]) == tuple(before[start:]):
            return list(now[kept:])
    # No overlap: all new runs, or a window the token budget cut otherwise: the texts not told yet.
    return [src for src in now if src not in before]


@dataclass(frozen=True)
class FactsSnapshot:
    """The kernel facts as told to the model: variable name -> its line, the recent inputs, the
    last error and recent outputs (each bounded)."""

    variables: dict[str, str]
    inputs: tuple[str, ...]
    last_error: str | None = None
    outputs: tuple[str, ...] = ()
    left_out: str = ""
    left_out_names: frozenset[str] = frozenset()

    @classmethod
    def of(cls, variables: Sequence[VariableInfo], inputs: Sequence[str], last_error: str | None = None,
           outputs: Sequence[str] = (), left_out: str = "", images: Sequence[TextBlockParam | ImageBlockParam] = (),
           left_out_names: Sequence[str] = ()) -> "FactsSnapshot":
        """From a :class:`NotebookState`'s fields (``images`` travel beside the text, not in it)."""
        return cls({v.name: _variable_line(v) for v in variables[:MAX_VARIABLES]}, tuple(inputs[-MAX_INPUTS:]),
                   _bounded(last_error, MAX_ERROR_CHARS) if last_error else None,
                   tuple(_bounded(o, MAX_OUTPUT_CHARS) for o in outputs[-MAX_OUTPUTS:]), left_out,
                   frozenset(left_out_names))

    @property
    def empty(self) -> bool:
        return not (self.variables or self.inputs or self.last_error or self.outputs or self.left_out)

    def full_text(self) -> str:
        lines = [f"<{FACTS_TAG}>"]
        if self.variables:
            lines += ["User variables:", *self.variables.values()]
        if self.inputs:
            lines += ["Recent cell inputs (newest last):", *_input_lines(self.inputs)]
        lines += _error_and_output_lines(self.last_error, self.outputs)
        if self.left_out:
            lines.append(self.left_out)
        return "\n".join([*lines, f"</{FACTS_TAG}>"])

    def diff_text(self, before: "FactsSnapshot") -> str | None:
        """The changes since ``before`` (None when there are none)."""
        changed = [line for name, line in self.variables.items() if before.variables.get(name) != line]
        removed = [name for name in before.variables if name not in self.variables and name not in self.left_out_names]
        new_inputs = _ran_since(before.inputs, self.inputs)
        new_error = self.last_error if self.last_error != before.last_error else None
        new_outputs = tuple(o for o in self.outputs if o not in before.outputs)
        left_out = self.left_out if self.left_out != before.left_out else ""
        if not (changed or removed or new_inputs or new_error or new_outputs or left_out):
            return None
        lines = [f"<{FACTS_TAG} changes-since-previous-prompt>"]
        if changed:
            lines += ["New or changed variables:", *changed]
        if removed:
            lines.append(f"Removed variables: {', '.join(removed)}")
        if new_inputs:
            lines += ["New cell inputs (newest last):", *_input_lines(new_inputs)]
        lines += _error_and_output_lines(new_error, new_outputs)
        if left_out:
            lines.append(left_out)
        return "\n".join([*lines, f"</{FACTS_TAG}>"])


class KernelFactsTracker:
    """What the model was last told about the kernel, so the next prompt carries only the change.

    A diff is only meaningful while the model can still see the full snapshot it builds on: the
    loop calls :meth:`forget` after a rollback, and the snapshot's history index is checked against
    the range the context manager hides.
    """

    def __init__(self) -> None:
        self._told: FactsSnapshot | None = None
        self._snapshot_at = -1  # history index of the message carrying the last full snapshot

    def forget(self) -> None:
        self._told, self._snapshot_at = None, -1

    def block(self, facts: FactsSnapshot, *, at: int, visible_from: int) -> TextBlockParam | None:
        """The text block for the prompt that will be history message ``at`` (None: nothing new).

        ``visible_from`` is the first history index after the hidden range (messages 0 and 1
        are always kept).
        """
        told = self._told
        snapshot_visible = self._snapshot_at in (0, 1) or self._snapshot_at >= visible_from
        full = facts.full_text()
        text = full
        if told is not None and snapshot_visible:
            diff = facts.diff_text(told)
            if diff is None:
                return None
            text = diff if len(diff) < len(full) else full
        if text is full:
            if facts.empty and told is None:
                return None
            self._snapshot_at = at
        self._told = facts
        return TextBlockParam(type="text", text=text)


def facts_blocks(tracker: KernelFactsTracker, kernel_facts: KernelFacts | None,
                 history: Sequence[Message], deleted_range: tuple[int, int] | None,
                 focus: FactsFocus | None = None,
                 redact: Callable[[KernelState], KernelState] | None = None) -> list[ContentBlock]:
    """The kernel facts (or their change) for the new prompt, and the images it is about: in the
    newest user message, not the system prompt, so the cached prefix survives a changed variable.
    ``redact`` cleans the state as it is read (every string in it), before it is compared or shown."""
    if kernel_facts is None:
        return []
    merged = bool(history) and history[-1]["role"] == "user"  # begin_turn extends that message
    at = len(history) - 1 if merged else len(history)
    if focus is not None and isinstance(kernel_facts, FocusedKernelFacts):
        state: KernelState = kernel_facts.focused(focus)
    else:
        state = kernel_facts()
    if redact is not None:
        state = redact(state)
    block = tracker.block(FactsSnapshot.of(*state), at=at, visible_from=max(start_of_rest(deleted_range), 2))
    images = list(state.images) if isinstance(state, NotebookState) else []
    return [*([block] if block is not None else []), *images]


def agent_code(history: Sequence[Message], last: int = 20) -> tuple[str, ...]:
    """The string inputs of the tool calls in the last ``last`` messages (the agent's own code)."""
    code = []
    for message in history[-last:]:
        content = message.get("content")
        if message.get("role") != "assistant" or isinstance(content, str):
            continue
        for block in content or ():
            tool_input = block.get("input") if is_tool_use(block) else None
            if isinstance(tool_input, dict):
                code += [v for v in tool_input.values() if isinstance(v, str)]
    return tuple(code)


class ImagesSeen:
    """The images of user messages the model still sees, by ``hash()`` of their data (cached by
    the string), kept up with the history as it grows: a prompt's cost does not grow with the
    conversation (a scan of every message took 1.3 ms per prompt at 10,000 messages). Messages are
    replaced, never changed in place, so a history changed before its end (a rollback, a merged
    prompt, a compaction) is indexed again from the first message that is not the one indexed."""

    def __init__(self) -> None:
        self._refs: list[Message] = []
        self._images: list[tuple[int, int]] = []  # (message index, hash of the image's data)

    def __call__(self, history: Sequence[Message], deleted_range: tuple[int, int] | None) -> frozenset[int]:
        self._sync(history if isinstance(history, list) else list(history))
        start = max(start_of_rest(deleted_range), 2)
        return frozenset(h for i, h in self._images if i < 2 or i >= start)

    def _sync(self, history: list[Message]) -> None:
        k = first_replaced(history, self._refs)
        if k is not None:
            del self._refs[k:]
            self._images = [(i, h) for i, h in self._images if i < k]
        for i in range(len(self._refs), len(history)):
            message = history[i]
            self._refs.append(message)
            self._images += [(i, h) for h in _image_hashes(message)]


def _image_hashes(message: Message) -> list[int]:
    content = message.get("content")
    if message.get("role") != "user" or isinstance(content, str):
        return []
    hashes = []
    for block in content or ():
        match block:
            case {"type": "image", "source": {"data": str(data)}}:
                hashes.append(hash(data))
    return hashes


def prompt_words(blocks: Sequence[ContentBlock]) -> str:
    """The text of a prompt's blocks (what a facts builder ranks variables by)."""
    return "\n".join(str(b.get("text", "")) for b in blocks if is_text(b))
