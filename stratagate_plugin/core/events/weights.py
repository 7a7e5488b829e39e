"""Long-term event weights (spec §8): decay by namespace turns, slowed by each adoption.

``w(t, n) = max(floor, exp(−λ(n)·t))`` with ``λ(n) = 0.15 / (1 + 1.5·ln n)``; ``t`` counts
namespace turns since the last adoption, ``n`` is the mention count. Weight ranks and
charts; it is never confidence. Precedence: forgotten/archived → 0, then pinned → 1, then
the floor, then the forced cap (0.1 for superseded events).
"""

import math
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict

from ..ids import new_id
from ..llm.tasks import Criticality
from .cards import EventCard, EventStatus

BASE_DECAY = 0.15
REHEARSAL_FACTOR = 1.5
SUPERSEDED_CAP = 0.1
FLOORS: dict[Criticality, float] = {
    "routine": 0.0,
    "preference": 0.3,
    "identity": 0.9,
    "safety": 1.0,
}
_GONE: frozenset[EventStatus] = frozenset({"forgotten", "archived"})


class WeightCounters(BaseModel):
    """The counters adoption moves: ``mention_count`` starts at 1, the turn at ``formedTurn``."""

    model_config = ConfigDict(frozen=True)

    mention_count: int = 1
    last_adopted_turn: int


def decay_rate(mention_count: int) -> float:
    """λ(n): every adoption slows forgetting (``n`` below 1 counts as 1)."""
    return BASE_DECAY / (1 + REHEARSAL_FACTOR * math.log(max(1, mention_count)))


def floor_weight(criticality: Criticality) -> float:
    return FLOORS[criticality]


def new_card(
    *, criticality: Criticality, formed_turn: int, created_at: datetime, **fields: Any
) -> EventCard:
    """A card as it is first formed (by derivation or by ``memory_remember``): a new id,
    adopted at the turn it was formed, its criticality's floor, updated when created."""
    return EventCard(
        id=new_id("evt"),
        criticality=criticality,
        formed_turn=formed_turn,
        last_adopted_turn=formed_turn,
        floor_weight=floor_weight(criticality),
        created_at=created_at,
        updated_at=created_at,
        **fields,
    )


def memory_weight(
    current_turn: int,
    last_adopted_turn: int,
    mention_count: int,
    criticality: Criticality = "routine",
    pinned: bool = False,
    forced_cap: float | None = None,
    status: EventStatus = "active",
    floor: float | None = None,
) -> float:
    """The weight now; ``floor`` (a stored ``floor_weight``) overrides the criticality floor.

    ``t`` never goes negative: a thread-local formed turn may lie ahead of the namespace turn.
    """
    if status in _GONE:
        return 0.0
    if pinned:
        return 1.0
    turns = max(0, current_turn - last_adopted_turn)
    lowest = floor_weight(criticality) if floor is None else floor
    weight = max(lowest, math.exp(-decay_rate(mention_count) * turns))
    return weight if forced_cap is None else min(weight, forced_cap)


def reinforce(counters: WeightCounters, current_turn: int) -> WeightCounters:
    """One adoption: ``mention_count + 1`` and the last adoption moves to ``current_turn``."""
    return WeightCounters(mention_count=counters.mention_count + 1, last_adopted_turn=current_turn)


def card_weight(card: EventCard, current_turn: int) -> float:
    """A stored card's weight at ``current_turn`` (its stored floor wins over its criticality)."""
    return memory_weight(
        current_turn,
        card.last_adopted_turn,
        card.mention_count,
        card.criticality,
        pinned=card.pinned,
        forced_cap=card.forced_cap,
        status=card.status,
        floor=card.floor_weight,
    )
