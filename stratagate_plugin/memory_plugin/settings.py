"""The plugin's settings, validated once at startup: a wrong value is one clear line.

Profiles are hand-edited YAML (``block_turn_size: "abc"``, ``namespace_mode: projet``);
checking every field here means the user reads which setting is wrong and what it should
be, not ``invalid literal for int()`` from deep inside.
"""

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..core.config import MemoryConfig
from ..core.errors import InvalidInput, validation_problems
from ..core.profile.spaces import namespace_for

SETTINGS_ID = "stratagate-memory"
CORE = MemoryConfig()


class MemorySettings(BaseModel):
    """The ``settings: {stratagate-memory: …}`` section of a profile."""

    model_config = ConfigDict(extra="forbid")

    database: str = ""
    namespace_mode: Literal["project", "session", "global"] = "project"
    namespace_prefix: str = Field(default="sg", min_length=1)
    global_namespace: str = Field(default="global", min_length=1)
    block_turn_size: int = Field(default=6, ge=1, le=1000)
    block_decay_lambda: float = Field(default=CORE.block_decay_lambda, ge=0)
    agent_memory_enabled: bool = True
    agent_memory_weight: float = Field(default=CORE.agent_memory_weight, ge=0, le=10)
    structured_task_timeout_s: float = Field(default=CORE.structured_task_timeout_s, gt=0)
    seal_idle_minutes: float = Field(default=30.0, ge=0)
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
    return namespace_for(
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


def validated(settings: dict[str, Any]) -> dict[str, Any]:
    """``settings`` checked and completed with defaults; ``InvalidInput`` names each problem."""
    try:
        return MemorySettings.model_validate(settings).model_dump()
    except ValidationError as error:
        problems = "; ".join(validation_problems(error, show_input=True))
        raise InvalidInput(f"invalid {SETTINGS_ID} settings in the profile: {problems}") from None
