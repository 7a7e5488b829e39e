"""Engine configuration (core defaults; the host plugin overrides some, e.g. 6-turn blocks).

Every number is finite and bounded: an ``inf`` accepted here was written back to the profile
as ``null`` (JSON has no infinity), which no later start could read.
"""

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from .blocks.rules import DEFAULT_DECAY_LAMBDA
from .derivation.input import DERIVE_TEXT_LIMIT
from .derivation.lease import DEFAULT_LEASE_S

CORE_BLOCK_TURN_SIZE = 12
MAX_BLOCK_TURN_SIZE = 1000
MAX_DECAY_LAMBDA = 10.0  # a block's weight is exp(-λ·age): past 10 every older block is ~0
MAX_TASK_TIMEOUT_S = 3600.0


class MemoryConfig(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    block_turn_size: int = Field(default=CORE_BLOCK_TURN_SIZE, ge=1, le=MAX_BLOCK_TURN_SIZE)
    block_decay_lambda: float = Field(default=DEFAULT_DECAY_LAMBDA, ge=0, le=MAX_DECAY_LAMBDA)
    structured_task_timeout_s: float = Field(default=120.0, ge=1, le=MAX_TASK_TIMEOUT_S)
    agent_memory_weight: float = Field(default=1.0, ge=0, le=5)
    # how long a derivation job stays its worker's without a heartbeat (renewed every third)
    job_lease_s: float = Field(default=DEFAULT_LEASE_S, gt=0)
    # derivation jobs (model calls) a pass runs at once; commits stay one at a time
    derive_concurrency: int = Field(default=4, ge=1, le=64)
    # characters of each message derivation reads: longer ones are derived from a prefix
    derive_text_limit: int = Field(default=DERIVE_TEXT_LIMIT, ge=1000)
    # who groups events into topics: the embedded offline grouper, or the configured model
    topic_projector: Literal["offline", "model"] = "offline"
    # who projects events into the graph: the embedded offline projector, or the model
    graph_projector: Literal["offline", "model"] = "offline"
    # a task the model fails is answered by the offline model, marked "offline-fallback"
    offline_fallback: bool = True
