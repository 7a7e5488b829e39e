"""Memory spaces on the engine: which spaces exist, and each one's block settings."""

from ..clock import iso, utc_now
from ..errors import InvalidInput
from ..profile.spaces import SpaceSummary
from ..service_base import ServiceBase
from .storage import SpaceSetting, SpacesStorage

__all__ = ["SpacesService"]


class SpacesService(ServiceBase):
    """Listing memory spaces and changing a space's block settings."""

    @property
    def store(self) -> SpacesStorage:
        return self.storage.spaces

    async def summaries(self, space: str | None = None) -> list[SpaceSummary]:
        """Every memory space (or the one named) with its counts, most recently used first."""
        return await self.store.summaries(space)

    async def names(self) -> list[str]:
        """Every memory space's namespace, most recently used first (nothing counted)."""
        return await self.store.names()

    async def set_block_turn_size(self, space: str, size: int) -> None:
        """Affects future sealing only; existing blocks are never re-split."""
        if not isinstance(size, int) or size < 1:
            raise InvalidInput("block_turn_size must be a positive integer")
        await self._update(space, "block_turn_size", size)

    async def set_decay_lambda(self, space: str, decay_lambda: float) -> None:
        if decay_lambda < 0:
            raise InvalidInput("block_decay_lambda must be ≥ 0")
        await self._update(space, "block_decay_lambda", float(decay_lambda))

    async def _update(self, space: str, setting: SpaceSetting, value: float) -> None:
        await self.store.set_setting(space, setting, value, self._defaults, iso(utc_now()))
