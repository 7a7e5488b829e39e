"""``ChatEndpoint``: the chat model a profile names (``model:``), checked as the file loads.

The harness only validates and keeps these settings; whoever builds the chat model (the
CLI, with the engine's HTTP client) takes them as a mapping. They are the settings of an
OpenAI-compatible endpoint, so the fields, defaults and bounds are those of the engine's
``HttpModelConfig`` (``tests/test_harness_standalone.py`` holds the two alike).
"""

from pydantic import BaseModel, ConfigDict, Field, field_validator

MAX_REPLY_BYTES = 512 * 1024


class ChatEndpoint(BaseModel):
    """Where and how to call the chat model; ``api_key_env`` names the variable holding
    the key (a key is never written in a profile)."""

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    base_url: str = Field(min_length=1)
    model: str = Field(min_length=1)
    api_key_env: str | None = None
    timeout_s: float = Field(default=120, gt=0, le=3600)
    max_output_tokens: int = Field(default=2048, ge=256)
    context_window: int | None = Field(default=None, ge=1024)
    temperature: float = Field(default=0, ge=0, le=2)
    max_attempts: int = Field(default=4, ge=1, le=10)
    retry_base_delay_s: float = Field(default=0.5, ge=0)
    retry_max_delay_s: float = Field(default=30, ge=0, le=3600)
    retry_max_total_s: float = Field(default=60, gt=0, le=3600)
    max_reply_bytes: int = Field(default=MAX_REPLY_BYTES, ge=4096)
    free: bool = False

    @field_validator("base_url")
    @classmethod
    def _strip_endpoint(cls, value: str) -> str:
        """Accept ``…/v1``, ``…/v1/`` and a pasted ``…/v1/chat/completions`` alike."""
        return value.strip().rstrip("/").removesuffix("/chat/completions").rstrip("/")
