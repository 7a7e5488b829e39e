"""The plugin's settings, validated at startup: a wrong value is named, never a traceback.

Profiles are hand-edited YAML (``block_turn_size: "abc"``, ``namespace_mode: projet``);
checking every field here means the user reads which setting is wrong and what it should
be, not ``invalid literal for int()`` from deep inside. A wrong tuning or display value
must not stop every command: it is replaced by its default with a warning naming the file,
the field, the value and the rule. A wrong database, space rule or model is refused (its
default would write into another file or space, or call another model), and so is an
unknown name, which may be a typo of one of those.
"""

import logging
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..core.config import MAX_BLOCK_TURN_SIZE, MAX_DECAY_LAMBDA, MAX_TASK_TIMEOUT_S, MemoryConfig
from ..core.errors import InvalidInput, validation_problems
from ..core.profile.spaces import space_for

logger = logging.getLogger(__name__)

SETTINGS_ID = "stratagate-memory"
CORE = MemoryConfig()
MAX_IDLE_MINUTES = 1e9  # ~1,900 years ("never"); now minus it must still be a date
FIX_HINT = "`stratagate doctor --fix-profile` rewrites the profile without it"


class MemorySettings(BaseModel):
    """The ``settings: {stratagate-memory: …}`` section of a profile."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    database: str = ""
    namespace_mode: Literal["project", "session", "global"] = "project"
    namespace_prefix: str = Field(default="sg", min_length=1)
    global_namespace: str = Field(default="global", min_length=1)
    block_turn_size: int = Field(default=6, ge=1, le=MAX_BLOCK_TURN_SIZE)
    block_decay_lambda: float = Field(default=CORE.block_decay_lambda, ge=0, le=MAX_DECAY_LAMBDA)
    agent_memory_enabled: bool = True
    agent_memory_weight: float = Field(default=CORE.agent_memory_weight, ge=0, le=5)
    structured_task_timeout_s: float = Field(
        default=CORE.structured_task_timeout_s, ge=1, le=MAX_TASK_TIMEOUT_S
    )
    seal_idle_minutes: float = Field(default=30.0, ge=0, le=MAX_IDLE_MINUTES)
    """A session's open tail quiet this long is sealed (and derived) as a shorter block."""
    derive_concurrency: int = Field(default=CORE.derive_concurrency, ge=1, le=64)
    job_poll_s: float = Field(default=3.0, gt=0, le=3600)
    """How often an idle worker (serve, mcp, chat) looks for jobs other processes queued."""
    derive_text_limit: int = Field(default=CORE.derive_text_limit, ge=1000)
    """Characters of each message derivation reads; a longer one is derived from a prefix."""
    show_status_rows: bool = True
    """The chat page shows a row when a block seals or becomes ready."""
    show_citations: bool = True
    """The chat page shows each answer's citation tail (the memories it adopted)."""
    model: dict[str, Any] = {}


DEFAULT_SETTINGS: dict[str, Any] = MemorySettings().model_dump()


def memory_config(settings: dict[str, Any]) -> MemoryConfig:
    """The engine configuration validated ``settings`` name (the plugin's and the CLI's)."""
    return MemoryConfig(
        block_turn_size=int(settings["block_turn_size"]),
        block_decay_lambda=float(settings["block_decay_lambda"]),
        structured_task_timeout_s=float(settings["structured_task_timeout_s"]),
        agent_memory_weight=float(settings["agent_memory_weight"]),
        derive_concurrency=int(settings["derive_concurrency"]),
        derive_text_limit=int(settings["derive_text_limit"]),
    )


def space_of(settings: dict[str, Any], cwd: str, session_id: str) -> str:
    """The memory space (namespace) a session in ``cwd`` uses under validated ``settings``:
    one rule for the plugin and for the commands that default to chat's space."""
    return space_for(
        str(settings["namespace_mode"]),
        cwd=cwd,
        session_id=session_id,
        prefix=str(settings["namespace_prefix"]),
        global_name=str(settings["global_namespace"]),
    )


def derivation_model(
    settings: dict[str, Any], profile_model: dict[str, Any] | None
) -> dict[str, Any]:
    """The endpoint memory derives with: the plugin's own ``model`` setting, else the
    profile's chat ``model:`` (one rule for the plugin and the commands)."""
    return dict(settings.get("model") or profile_model or {})


TUNING = frozenset(MemorySettings.model_fields) - {
    "database",
    "namespace_mode",
    "namespace_prefix",
    "global_namespace",
    "model",
}
"""Settings a wrong value of which may become its default: the others would silently change
where memory is written or who derives it, and an unknown name may be a typo of one."""
_warned: set[tuple[str, str, str]] = set()


def validated(settings: dict[str, Any], source: str = "the profile") -> dict[str, Any]:
    """``settings`` checked and completed with defaults. A wrong tuning or display value
    becomes its default with one warning; a wrong database, space rule or model, or an
    unknown name, raises ``InvalidInput`` naming each problem. ``source``: the file."""
    try:
        return MemorySettings.model_validate(settings).model_dump()
    except ValidationError as error:
        problems = setting_problems(error)
    refused = [line for field, line in problems if field not in TUNING]
    if refused:
        lines = "; ".join(refused)
        raise InvalidInput(f"{source}: invalid {SETTINGS_ID} settings: {lines}; {FIX_HINT}")
    for field, line in problems:
        _warn_once(source, field, line)
    kept = {name: value for name, value in settings.items() if name not in dict(problems)}
    return MemorySettings.model_validate(kept).model_dump()


def setting_problems(error: ValidationError) -> list[tuple[str, str]]:
    """``(field, "field: rule (got value)")`` for each problem of a settings section."""
    lines = validation_problems(error, show_input=True)
    found = zip(error.errors(include_url=False), lines, strict=True)
    return [(str(problem["loc"][0]) if problem["loc"] else "", line) for problem, line in found]


def without_bad_settings(settings: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """``settings`` with every wrong or unknown field dropped (its default applies), and
    one line per field dropped: ``doctor --fix-profile``'s repair of the section."""
    try:
        MemorySettings.model_validate(settings)
    except ValidationError as error:
        problems = setting_problems(error)
        bad = {field for field, _ in problems}
        return {k: v for k, v in settings.items() if k not in bad}, [p for _, p in problems]
    return dict(settings), []


def _warn_once(source: str, field: str, line: str) -> None:
    default = DEFAULT_SETTINGS.get(field)
    if (source, field, line) in _warned:  # a command reads its settings several times
        return
    _warned.add((source, field, line))
    logger.warning(
        "stratagate: warning: %s: %s.%s; using the default %r; %s",
        *(source, SETTINGS_ID, line, default, FIX_HINT),
    )
