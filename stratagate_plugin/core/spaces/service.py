"""Memory spaces on the engine: which spaces exist, and each one's block settings."""

from ..clock import iso, utc_now
from ..errors import InvalidInput
from ..profile.spaces import SpaceSummary
from ..service_base import ServiceBase
from ..store.space_rows import space_names, space_summaries
from ..store.turns import update_namespace_setting

__all__ = ["SpacesService"]


class SpacesService(ServiceBase):
    """Listing memory spaces and changing a space's block settings."""

    async def summaries(self, namespace: str | None = None) -> list[SpaceSummary]:
        """Every memory space (or the one named) with its counts, most recently used first."""
        return await self.db.read(lambda raw: space_summaries(raw, namespace))

    async def names(self) -> list[str]:
        """Every memory space's namespace, most recently used first (nothing counted)."""
        return await self.db.read(space_names)

    async def set_block_turn_size(self, namespace: str, size: int) -> None:
        """Affects future sealing only; existing blocks are never re-split."""
        if not isinstance(size, int) or size < 1:
            raise InvalidInput("block_turn_size must be a positive integer")
        await self._update(namespace, "block_turn_size", size)

    async def set_decay_lambda(self, namespace: str, decay_lambda: float) -> None:
        if decay_lambda < 0:
            raise InvalidInput("block_decay_lambda must be ≥ 0")
        await self._update(namespace, "block_decay_lambda", float(decay_lambda))

    async def _update(self, namespace: str, column: str, value: float) -> None:
        now = iso(utc_now())
        defaults = self._defaults
        await self.db.write(
            lambda raw: update_namespace_setting(raw, namespace, column, value, defaults, now)
        )
