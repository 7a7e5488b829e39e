"""``HttpModelConfig``: where and how to call an OpenAI-compatible model, retries included.

Kept apart from ``http.py`` so that choosing a model (``select.py``) and reading a profile
can validate settings without importing httpx.
"""

from pydantic import BaseModel, ConfigDict, Field, field_validator

from .retry import RetryPolicy

DEFAULT_MAX_REPLY_BYTES = 512 * 1024


class HttpModelConfig(BaseModel):
    """Where and how to call the model; ``api_key_env`` names the variable holding the key.

    ``max_output_tokens`` caps every answer; a task with a budget of its own (the topic
    projection's 32,768, spec §5.3) gets it instead when ``context_window`` (the model's,
    in tokens) is known, reduced so that its input and output fit the window. An unknown
    window is not assumed to be large: such a task then keeps ``max_output_tokens``.

    ``timeout_s`` bounds one request. A failed one (429, 5xx, a dropped connection, a
    timeout) is tried again, ``max_attempts`` requests in all, within ``retry_max_total_s``
    from the first: a retry gets only what is left of that budget, so one request, retries
    included, ends within the larger of ``timeout_s`` and ``retry_max_total_s``.

    ``max_reply_bytes`` caps one reply as read (after decompression): a runaway server's
    30 MB answer would otherwise be stored twice and derived for minutes, so the read stops
    at the cap and the call fails.

    ``free`` marks a model that costs nothing per call (a local server): the topic
    catalog's historical budget, which bounds model cost, then does not hold it back.
    """

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
    max_reply_bytes: int = Field(default=DEFAULT_MAX_REPLY_BYTES, ge=4096)
    free: bool = False

    @field_validator("base_url")
    @classmethod
    def _strip_endpoint(cls, value: str) -> str:
        return normal_base_url(value)

    @property
    def retry_policy(self) -> RetryPolicy:
        return RetryPolicy(
            max_attempts=self.max_attempts,
            base_delay_s=self.retry_base_delay_s,
            max_delay_s=self.retry_max_delay_s,
            max_total_s=self.retry_max_total_s,
        )


def normal_base_url(value: str) -> str:
    """Accept ``…/v1``, ``…/v1/`` and a pasted ``…/v1/chat/completions`` alike."""
    value = value.strip().rstrip("/")
    return value.removesuffix("/chat/completions").rstrip("/")
