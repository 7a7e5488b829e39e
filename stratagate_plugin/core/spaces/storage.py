"""What the spaces service needs from storage (the contract a database implements)."""

from typing import Literal, Protocol

from ..profile.spaces import SpaceSummary

__all__ = ["SpaceDefaults", "SpaceSetting", "SpacesStorage"]

SpaceSetting = Literal["block_turn_size", "block_decay_lambda"]


class SpaceDefaults(Protocol):
    """The block settings a space starts with when a write makes it."""

    @property
    def block_turn_size(self) -> int: ...

    @property
    def block_decay_lambda(self) -> float: ...


class SpacesStorage(Protocol):
    async def summaries(self, space: str | None = None) -> list[SpaceSummary]:
        """Every space (or the one named; none when unknown) with its counts, most
        recently used first, from the counters recording keeps (no message scanned)."""
        ...

    async def names(self) -> list[str]:
        """Every space's namespace, most recently used first, nothing counted."""
        ...

    async def set_setting(
        self,
        space: str,
        setting: SpaceSetting,
        value: float,
        defaults: SpaceDefaults,
        now: str,
    ) -> None:
        """One transaction: the space made with ``defaults`` if new, then ``setting`` set."""
        ...
