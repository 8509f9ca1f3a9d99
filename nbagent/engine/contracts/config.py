"""One session's settings (:class:`SessionConfig`) and one prompt's limits (:class:`RunLimits`).

Every default of the engine is defined here, once. ``SessionConfig`` holds settings only: the
things a session is wired to (provider, tools, executor, the user to ask) are passed to the
engine as collaborators, and an API key is never part of it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Mapping, get_args

from ..api_facts.models import DEFAULT_MODEL, ModelInfo, has_stand_in_price, load_models
from ..api_facts.request_params import reasoning_params, server_tool_definitions
from .context_policy import DEFAULT_POLICY, ContextPolicy
from .errors import NbAgentError

if TYPE_CHECKING:  # the kernel's start imports this module: annotations only
    from .json_types import JSONValue

DEFAULT_MAX_REQUESTS = 25
DEFAULT_MAX_BUDGET_USD: float | None = None
"""Per-prompt budget (None: none)."""
DEFAULT_MAX_SESSION_BUDGET_USD: float | None = None
"""Session budget (None: none)."""
DEFAULT_MAX_TOKENS = 8192
DEFAULT_KERNEL_CONTEXT_TOKENS = 3_000
"""Tokens of the kernel context (variables, recent cells, last error, outputs) a prompt carries:
enough for the frames a prompt names in full and a line for each other variable."""
MAX_NOTES_CHARS = 100_000  # the notes ride in every prompt: a bound past this defeats their purpose
DEFAULT_TOOL_OUTPUT_LIMIT = 30_000
DEFAULT_MAX_RETRY_DELAY_S = 60.0
DEFAULT_TOOL_WAIT_S = 10.0
DEFAULT_MAX_RATE_LIMIT_WAIT_S = 900.0
"""Most seconds one request waits for a shared rate limit in all (paced and ``retry-after``)."""
DEFAULT_MCP_CALL_TIMEOUT_S = 300.0
"""Longest wait for an MCP server to answer one tool call: a server that never answers (or answers
malformed JSON-RPC, or another request's id) then gives the model an error, not a hang until abort."""
DEFAULT_TOOL_CAPTURE_LIMIT = 2_000_000
DEFAULT_SECRET_ENV = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")  # the variables the SDK reads credentials from
CREDENTIAL_ENV = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")
"""The SDK's credential variables: never in a tool's child process, whatever ``secret_env`` says."""
# JSON nesting accepted into history (tool inputs) and from task files; real data is far shallower,
# and a bound keeps every recursive walk (pydantic, dataclasses.asdict, json) far from the stack limit.
MAX_JSON_DEPTH = 64

PermissionMode = Literal["default", "accept_edits", "plan", "bypass"]
"""``default``: ask for tools that are not read-only; ``accept_edits``: file edits inside cwd run
without asking (code still asks); ``plan``: read-only tools only; ``bypass``: everything runs."""
PERMISSION_MODES: tuple[str, ...] = get_args(PermissionMode)
DEFAULT_PERMISSION_MODE: PermissionMode = "default"


@dataclass(frozen=True)
class SessionConfig:
    """The settings of one agent session (frozen: change them with :meth:`replace`).

    >>> SessionConfig(model="claude-haiku-4-5").replace(max_requests=5).max_requests
    5
    """

    model: str = DEFAULT_MODEL
    """Model id sent with every request (see ``nbagent.engine.api_facts.models`` for windows and prices)."""
    fallback_model: str | None = None
    """Used for the rest of a turn when the model fails with overloaded/not_found after retries."""
    cwd: Path = field(default_factory=Path.cwd)
    """Working directory: file tools resolve paths here and refuse paths outside it."""
    allowed_paths: tuple[Path, ...] = ()
    """Paths outside ``cwd`` that file tools may touch."""
    allow: tuple[str, ...] = ()
    """Tool names that run without asking."""
    deny: tuple[str, ...] = ()
    """Tool names that never run (wins over ``allow``, read-only and every permission mode)."""
    permission_mode: PermissionMode = DEFAULT_PERMISSION_MODE
    """Who may run what without asking (see :data:`PermissionMode`); ``bypass`` is never a default."""
    shell: bool = False
    """Whether the shell tool is offered and may run commands (each still asks)."""
    custom_system_prompt: str | None = None
    """Replaces nbagent's base system prompt (the environment section is still added)."""
    append_system_prompt: str | None = None
    """Added at the end of the system prompt."""
    in_notebook: bool = False
    """Whether the system prompt says the agent runs inside a notebook kernel."""
    thinking_budget: int | None = None
    """Extended thinking budget in tokens (None: off). Only for models that take budgets (see
    docs/models.md); adaptive-only models refuse it and are steered with ``effort``."""
    effort: str | None = None
    """``output_config.effort`` (``low``/``medium``/``high``/``xhigh``/``max``, as the model takes;
    None: the model's default)."""
    server_tools: tuple[str | Mapping[str, JSONValue], ...] = ()
    """Anthropic server tools to offer, by name (``"web_search"``, ``"web_fetch"``) or as API dicts."""
    max_tokens: int = DEFAULT_MAX_TOKENS
    """``max_tokens`` of every request (output limit)."""
    context_window: int | None = None
    """Override of the model table's window (a tiny one makes truncation visible in demos)."""
    prices: Mapping[str, ModelInfo] | None = None
    """Rows added to or overriding the built-in model table (proxies, special plans): ModelInfo
    objects, plain rows (see :func:`~nbagent.engine.api_facts.models.load_models`) or a TOML/JSON file path."""
    max_requests: int | None = DEFAULT_MAX_REQUESTS
    """Most API requests per prompt (then ``Done("max_requests")``); None: no limit."""
    max_budget_usd: float | None = DEFAULT_MAX_BUDGET_USD
    """Per-prompt budget: once this prompt's requests cost this much (USD), no further request is
    sent (then ``Done("max_budget")``); what earlier prompts spent does not count."""
    max_session_budget_usd: float | None = DEFAULT_MAX_SESSION_BUDGET_USD
    """Session budget: once everything the session was billed (rolled-back requests included)
    reaches this (USD), no further request is sent."""
    token_budget: int | None = None
    """Per-prompt token budget: once this prompt's requests used this many tokens (input, cache
    writes and reads, output), no further request is sent (then ``Done("max_budget")``). Works for
    any model, priced or not (a local model, a gateway's)."""
    session_token_budget: int | None = None
    """Session token budget: once every request the session was billed used this many tokens."""
    known_windows: Mapping[str, int] | None = None
    """Context windows of models the model table does not know, by model id (what an endpoint
    reported, or its profile's ``context_window``); ``context_window`` still overrides."""
    task_dir: Path | None = None
    """Persistence folder (None: in memory only)."""
    tool_output_limit: int = DEFAULT_TOOL_OUTPUT_LIMIT
    """Tool output longer than this many characters is cut in the middle before the model sees it."""
    tool_capture_limit: int = DEFAULT_TOOL_CAPTURE_LIMIT
    """Most characters of a tool's output captured, displayed and saved (the rest is dropped, and
    how much is said); what the model sees is cut further to ``tool_output_limit``."""
    secret_env: tuple[str, ...] = DEFAULT_SECRET_ENV
    """Environment variables whose values are secrets: left out of the shell tool's environment
    and replaced by ``[redacted]`` in tool output before the model, the transcript or disk see it."""
    request_timeout_s: float | None = None
    """Per-request timeout passed to the provider (None: the client's default)."""
    max_retry_delay_s: float = DEFAULT_MAX_RETRY_DELAY_S
    """Longest automatic retry wait; a server asking for longer is reported to the user instead."""
    max_rate_limit_wait_s: float = DEFAULT_MAX_RATE_LIMIT_WAIT_S
    """Most seconds one request waits for the shared rate limit in all: 429s with ``retry-after``
    are waited out without counting as retries until then, so nothing waits forever."""
    tool_wait_s: float = DEFAULT_TOOL_WAIT_S
    """Longest wait before a request for tool servers (MCP) that are still connecting."""
    mcp_call_timeout_s: float = DEFAULT_MCP_CALL_TIMEOUT_S
    """Longest wait for an MCP server's answer to one tool call (then an error result)."""
    auto_compact: float | None = None
    """Summarise the hidden part once the previous request used this fraction of the window
    (e.g. 0.8; None: off, only ordinary truncation)."""
    compact_model: str | None = None
    """Model of the summary request (None: the session's model)."""
    context: ContextPolicy | str | Mapping[str, object] = DEFAULT_POLICY
    """The context policy: ordered layers (mask, server edits, summary, server compaction,
    truncation) as a preset name or ``LAYER[:key=value]+LAYER`` (see
    :class:`~nbagent.engine.contracts.context_policy.ContextPolicy`); stored parsed."""

    kernel_context_tokens: int = DEFAULT_KERNEL_CONTEXT_TOKENS
    """Token budget of what a prompt tells the model about the live kernel (see docs/kernel-context.md):
    what does not fit is named in the request, so the model can ask for it with the python tool."""

    notes: int = 0
    """The agent's notes file (``notes.md`` in the task folder, the memory-tool pattern): its bound
    in characters; 0 (the default) is off. On: a ``notes`` tool, and each prompt carries the notes
    (see :mod:`~nbagent.engine.loop.notes`)."""

    def __post_init__(self) -> None:
        # Accept what a user naturally passes (str paths, lists) and store one canonical form.
        set_ = object.__setattr__
        set_(self, "cwd", Path(self.cwd).expanduser().resolve())
        if self.task_dir is not None:
            set_(self, "task_dir", Path(self.task_dir).expanduser())
        set_(self, "allowed_paths", tuple(Path(p).expanduser() for p in self.allowed_paths))
        for name in ("allow", "deny", "server_tools", "secret_env"):
            value = getattr(self, name)
            set_(self, name, (value,) if isinstance(value, (str, Mapping)) else tuple(value))
        if self.prices is not None:
            set_(self, "prices", load_models(self.prices))
        set_(self, "context", ContextPolicy.parse(self.context))
        # A setting the model refuses fails now, with what to do instead, not as a 400 later.
        check_model_id(self.model)
        reasoning_params(self.model, self.thinking_budget, self.effort, self.prices)
        server_tool_definitions(self.server_tools)
        _check_positive(self, "max_tokens", "tool_output_limit", "tool_capture_limit", "kernel_context_tokens")
        _check_positive(self, "max_requests", "context_window", "thinking_budget", optional=True)
        if self.permission_mode not in PERMISSION_MODES:
            raise ValueError(f"permission_mode must be one of {', '.join(PERMISSION_MODES)}, "
                             f"got {self.permission_mode!r}")
        check_notes_bound(self.notes)
        if self.auto_compact is not None and not 0 < self.auto_compact <= 1:
            raise ValueError(f"auto_compact must be a fraction of the window in (0, 1], got {self.auto_compact!r}")
        _check_usd(self, "max_budget_usd", "max_session_budget_usd")
        _check_positive(self, "token_budget", "session_token_budget", optional=True)
        if self.known_windows is not None:
            set_(self, "known_windows", {str(k): int(v) for k, v in dict(self.known_windows).items()})
        refusal = unpriced_budget_refusal(self.model, self.prices, self.max_budget_usd, self.max_session_budget_usd)
        if refusal is not None:
            raise UnpricedBudgetError(refusal)

    def replace(self, **changes: Any) -> "SessionConfig":
        """A copy with ``changes``; an unknown setting raises ``TypeError`` naming the known ones."""
        unknown = sorted(set(changes) - set(setting_names()))
        if unknown:
            raise TypeError(f"unknown setting(s) {', '.join(unknown)}; settings are: {', '.join(setting_names())}")
        return dataclasses.replace(self, **changes)


@dataclass(frozen=True)
class RunLimits:
    """Limits of one prompt, overriding the session's for that run only (None: the session's).
    ``max_budget_usd`` counts this prompt's spend only; the session budget is a setting
    (``SessionConfig.max_session_budget_usd``)."""

    max_requests: int | None = None
    max_budget_usd: float | None = None
    token_budget: int | None = None
    """Tokens this prompt may use (None: the session's ``token_budget``)."""

    def __post_init__(self) -> None:
        # Checked here too: RunLimits(max_budget_usd=nan) compared False with every cost, a budget
        # that never stopped anything.
        _check_positive(self, "max_requests", "token_budget", optional=True)
        _check_usd(self, "max_budget_usd")

    def resolve(self, config: SessionConfig) -> tuple[int | None, float | None]:
        """``(max_requests, max_budget_usd)`` in force for a run under ``config``."""
        requests = self.max_requests if self.max_requests is not None else config.max_requests
        budget = self.max_budget_usd if self.max_budget_usd is not None else config.max_budget_usd
        return requests, budget


class UnpricedBudgetError(NbAgentError, ValueError):
    """A dollar budget was set on a model nbagent has no prices for: it could not be enforced."""


def check_model_id(model: object) -> str:
    """``model``, or a ``ValueError`` where it is no model id: ``%config AgentMagics.model =
    os.environ.get("MODEL", "")`` got the API's "model: Field required" (400), which said nothing of
    the setting, after the request was sent (and a page offered Retry)."""
    if not isinstance(model, str) or not model.strip():
        raise ValueError(f"model must be a model id such as {DEFAULT_MODEL!r}, got {model!r} (see docs/models.md)")
    if _holds_a_key(model):  # os.environ["ANTHROPIC_API_KEY"] in the wrong place, "Bearer …": not echoed
        raise ValueError("model is an API key, not a model id (it is not shown); set the model to an id such as "
                         f"{DEFAULT_MODEL!r} and keep the key in its environment variable (see docs/models.md)")
    if model != model.strip():  # "$(cat model.txt)", a pasted id: the API's 404 named no setting either
        use = f"use {model.strip()!r}" if len(model.strip()) <= 40 else "use it without them"
        raise ValueError(f"model {_shown(model)} has spaces or a line break around it: {use}")
    bad = sorted({c for c in model if not (c.isalnum() or c in _MODEL_ID_PUNCTUATION)})
    if bad or len(model) > _MODEL_ID_MAX:  # a sentence, a quoted string: every prompt would fail at the API
        why = (f"it has {' '.join(repr(c) for c in bad)}" if bad else f"it is over {_MODEL_ID_MAX} characters")
        raise ValueError(f"model {_shown(model)} cannot be a model id: {why}. Model ids are letters, digits and "
                         f"{' '.join(_MODEL_ID_PUNCTUATION.strip())} and spaces inside (as {DEFAULT_MODEL}, "
                         "anthropic.claude-…-v1:0, claude-…@20250929, openrouter/…, llama3.1:8b, Claude Sonnet EU, "
                         "claude-sonnet-4-5[1m]); see docs/models.md")
    return model


#: What every provider's model ids are made of besides letters and digits: Anthropic's ``-``, Bedrock's
#: ``anthropic.claude-…-v1:0`` and inference-profile ARNs (``arn:aws:bedrock:…/us.anthropic…``),
#: Vertex's ``claude-…@2024…``, LiteLLM's and Hugging Face's ``provider/org/model``, Ollama's
#: ``name:tag`` and quantisations (``q4_K_M``), fine-tunes' ``ft:…``, a local server's ``~/m+lora.gguf``,
#: Fireworks' deployments (``accounts/…/models/x#accounts/…/deployments/y``) and a Windows path's ``\``
#: (llama.cpp's and vLLM's served name is the model's path as given; a path's spaces are taken too),
#: a gateway's alias (LiteLLM's or a local server's ``model_name``: ``Claude Sonnet EU``, spaces inside),
#: a URL-encoded Bedrock ARN (``arn%3Aaws%3Abedrock…``) and a context-window variant (``claude-sonnet-4-5[1m]``).
#: Not quotes, ``,``, ``$``, ``<>``, ``!``, tabs, line breaks or other control characters: no id has them.
_MODEL_ID_PUNCTUATION = "-_.:/@+~#\\%[]() "
_MODEL_ID_MAX = 512
_KEY_PREFIXES = ("sk-ant-", "sk-proj-")
_TOKEN_PREFIXES = ("ghp_", "github_pat_", "glpat-", "hf_", "xoxb-", "xoxp-", "eyJ", "AKIA", "ASIA")
"""A key's or token's start (Anthropic, OpenAI, GitHub, GitLab, Hugging Face, Slack, a JWT): no model id or
word of a gateway's alias has it, and a refusal must not echo the key."""
_AUTH_WORDS = frozenset({"bearer", "basic", "token", "authorization:", "x-api-key", "x-api-key:", "api-key:"})


def _holds_a_key(model: str) -> bool:
    """Whether ``model`` is a key or holds one among its words: with spaces taken inside an id (a gateway's
    alias), ``Bearer sk-ant-…`` and ``x-api-key sk-proj-…`` (a header pasted) passed, and the setting's
    lines (the unpriced-model notice, ``%agent config``) showed the key in the saved notebook."""
    words = model.split()
    return any(word.startswith(_KEY_PREFIXES) or (word.startswith(_TOKEN_PREFIXES) and len(word) >= 20)
               for word in words) or (len(words) > 1 and words[0].lower() in _AUTH_WORDS and len(words[1]) >= 16)


def _shown(model: str) -> str:
    """A refused id as its error names it: a long one by its head only, since what was refused may be a
    secret read from a variable (``Agent(model=os.environ["TOKEN"])``) and the error is saved with the cell."""
    return repr(model) if len(model) <= 40 else f"{model[:12]!r}… ({len(model)} characters)"


def unpriced_budget_refusal(model: str, prices: Mapping[str, ModelInfo] | None,
                            *budgets_usd: float | None) -> str | None:
    """Why a dollar budget on ``model`` cannot be enforced (None: it can, or no budget is set).

    A budget is never silently off, and a local or gateway model is never counted at Claude's
    prices: its dollar budget is refused with what to use instead."""
    if all(b is None for b in budgets_usd) or has_stand_in_price(model, prices):
        return None
    return (f"nbagent has no prices for model {model!r}, so a dollar budget cannot be enforced on it. "
            "Use a token budget instead (--token-budget / --session-token-budget, token_budget= / "
            "session_token_budget=), or add the model's prices to the model table (prices={...}, see docs/models.md)")


def check_notes_bound(value: object) -> int:
    """``value`` if it is a bound the notes file takes (0, off, to :data:`MAX_NOTES_CHARS`), else a
    ``ValueError`` naming the range: one message for ``SessionConfig(notes=)``, ``--notes`` and the trait."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_NOTES_CHARS:
        raise ValueError(f"notes is the notes file's bound in characters: 0 (off) to {MAX_NOTES_CHARS:,}, "
                         f"got {value!r}")
    return value


def setting_names() -> list[str]:
    """The names of every :class:`SessionConfig` setting."""
    return [f.name for f in dataclasses.fields(SessionConfig)]


def _check_usd(settings: SessionConfig | RunLimits, *names: str) -> None:
    for name in names:
        value = getattr(settings, name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0):
            raise ValueError(f"{name} must be >= 0 (USD), got {value!r}")


def _check_positive(settings: SessionConfig | RunLimits, *names: str, optional: bool = False) -> None:
    for name in names:
        value = getattr(settings, name)
        if value is None and optional:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
