"""Shapes that retrieval hands back to tools and the fused ``retrieve()``."""

from datetime import datetime

from pydantic import BaseModel, ConfigDict

from ..records import Role


class HitMessage(BaseModel):
    """One stored message as a search hit shows it."""

    model_config = ConfigDict(frozen=True)

    id: str
    role: Role
    content: str
    created_at: datetime
    thread_id: str
    position: int


class RawHit(BaseModel):
    """A message that matched a raw search, with its block (None while it is in an open
    tail) and thread neighbours."""

    model_config = ConfigDict(frozen=True)

    block_id: str | None
    turn_range: tuple[int, int]
    message: HitMessage
    previous: HitMessage | None = None
    next: HitMessage | None = None
    score: float
