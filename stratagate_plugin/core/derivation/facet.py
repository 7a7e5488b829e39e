"""Façade facet: derivation jobs and reading event cards."""

from ..events.cards import EventCard
from ..service_base import ServiceBase
from ..store import event_rows


class DerivationFacet(ServiceBase):
    async def list_events(
        self,
        namespace: str | None = None,
        *,
        block_id: str | None = None,
        include_hidden: bool = False,
        limit: int = 1000,
        offset: int = 0,
    ) -> list[EventCard]:
        statuses = event_rows.VISIBLE + (("forgotten", "archived") if include_hidden else ())
        return await self.db.read(
            lambda raw: event_rows.list_events(raw, namespace, statuses, block_id, limit, offset)
        )

    async def get_event(self, event_id: str) -> EventCard:
        return await self.db.read(lambda raw: event_rows.get_event(raw, event_id))
