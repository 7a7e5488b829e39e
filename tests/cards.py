"""Event cards for tests: every required field filled, anything overridable."""

from datetime import UTC, datetime
from typing import Any

from stratagate_plugin.core.events.cards import EventCard

T0 = datetime(2024, 5, 1, tzinfo=UTC)


def event_card(event_id: str, **fields: Any) -> EventCard:
    """A visible user-scope card in namespace ``ns`` created at ``T0`` (override any field)."""
    defaults: dict[str, Any] = {
        "id": event_id,
        "namespace": "ns",
        "title": event_id,
        "summary": "-",
        "source_block_id": None,
        "source_message_ids": [],
        "formed_turn": 0,
        "temporal": {},
        "scope": "user",
        "last_adopted_turn": 0,
        "created_at": T0,
        "updated_at": T0,
    }
    return EventCard(**(defaults | fields))
