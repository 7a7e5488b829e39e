"""An event's weight over turns (spec §8), for the detail page's chart.

The weight at each turn is what ``events.weights`` gives with the counters the event had
then: ``mention_count`` 1 and the last adoption at ``formed_turn``, each adoption receipt
moving them (``reinforce``). Reinforcements without a receipt (a repeated agent memory)
are placed at the card's stored ``last_adopted_turn``, so the last point is the weight the
card has now. The card's present flags (floor, cap, pin, status) apply throughout. At most
``MAX_POINTS`` turns are computed however long the event has lived.
"""

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from ..events.cards import EventCard
from ..events.weights import WeightCounters, card_weight, reinforce

MAX_POINTS = 200


class WeightPoint(BaseModel):
    model_config = ConfigDict(frozen=True)

    turn: int
    weight: float
    adopted: bool = False


def reinforcement_turns(card: EventCard, adoption_turns: Sequence[int]) -> list[int]:
    """The turns the counters moved at, oldest first (unreceipted ones at the stored turn)."""
    moves = sorted(adoption_turns)
    missing = card.mention_count - 1 - len(moves)
    return sorted(moves + [card.last_adopted_turn] * max(0, missing))


def weight_trajectory(
    card: EventCard,
    adoption_turns: Sequence[int],
    current_turn: int,
    max_points: int = MAX_POINTS,
) -> list[WeightPoint]:
    """(turn, weight, adopted there) from the formed turn to ``current_turn``."""
    moves = reinforcement_turns(card, adoption_turns)
    start = card.formed_turn
    end = max(start, current_turn, *moves)
    adopted = {max(start, turn) for turn in adoption_turns}
    counters = WeightCounters(last_adopted_turn=start)
    points: list[WeightPoint] = []
    pending = list(moves)
    for turn in sampled_turns(start, end, sorted(adopted), max_points):
        while pending and max(start, pending[0]) <= turn:
            counters = reinforce(counters, pending.pop(0))
        moved = {
            "mention_count": counters.mention_count,
            "last_adopted_turn": counters.last_adopted_turn,
        }
        weight = card_weight(card.model_copy(update=moved), turn)
        points.append(WeightPoint(turn=turn, weight=round(weight, 4), adopted=turn in adopted))
    return points


def sampled_turns(start: int, end: int, marked: Sequence[int], max_points: int) -> list[int]:
    """Every turn when they fit; else an even grid plus the marked turns and the turn before
    each (so a jump shows), the marks thinned to a quarter of the points."""
    if end - start + 1 <= max_points:
        return list(range(start, end + 1))
    step = max(1, -(-len(marked) // max(1, max_points // 4)))
    extra = {t for mark in marked[::step] for t in (mark - 1, mark) if start <= t <= end}
    count = max(2, max_points - len(extra))
    grid = {start + round(i * (end - start) / (count - 1)) for i in range(count)}
    return sorted(grid | extra)
