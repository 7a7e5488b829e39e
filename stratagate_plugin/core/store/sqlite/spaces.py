"""The spaces' storage contract (``core/spaces/storage.py``) on SQLite."""

from ...profile.spaces import SpaceSummary
from ...spaces.storage import SpaceDefaults, SpaceSetting
from .. import space_rows, turns
from ..units import UnitDatabase


class SqliteSpacesStorage:
    def __init__(self, db: UnitDatabase) -> None:
        self.db = db

    async def summaries(self, space: str | None = None) -> list[SpaceSummary]:
        return await self.db.read(lambda raw: space_rows.space_summaries(raw, space))

    async def names(self) -> list[str]:
        return await self.db.read(space_rows.space_names)

    async def set_setting(
        self,
        space: str,
        setting: SpaceSetting,
        value: float,
        defaults: SpaceDefaults,
        now: str,
    ) -> None:
        made = turns.NewSpaceDefaults(defaults.block_turn_size, defaults.block_decay_lambda)
        await self.db.write(
            lambda raw: turns.update_space_setting(raw, space, setting, value, made, now)
        )
