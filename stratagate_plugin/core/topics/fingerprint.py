"""An event's fingerprint (spec §5.2): what a topic citing it depends on.

SHA-256 of the card's canonical JSON without its bookkeeping: weight, adoption and
retrieval counters, pinning, the update time, the formed turn, the graph's participant
node ids and who derived it. A changed text or status (forgotten, superseded) changes it;
adoption, retrieval and decay never do, so they never make a topic stale.
"""

import hashlib
import json
from typing import Any

from ..events.cards import EventCard

BOOKKEEPING = frozenset(
    {
        "mention_count",
        "last_adopted_turn",
        "last_retrieved_at",
        "pinned",
        "floor_weight",
        "forced_cap",
        "updated_at",
        "formed_turn",
        "participant_node_ids",
        "node_ids",
        "derived_by",
        "derive_error",
    }
)


def event_fingerprint(card: EventCard) -> str:
    data: dict[str, Any] = card.model_dump(mode="json", exclude=set(BOOKKEEPING))
    data["temporal"] = {k: v for k, v in card.temporal.items() if k not in BOOKKEEPING}
    text = json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
