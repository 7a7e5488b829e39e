"""What every capability's service reads from the façade that composes them."""

from typing import Any

from .config import MemoryConfig
from .llm.base import StructuredModel
from .store import Database
from .store.turns import NamespaceDefaults


class ServiceBase:
    """Attributes ``StrataGate`` sets up; the services only read them."""

    db: Database
    config: MemoryConfig
    model: StructuredModel

    @property
    def _defaults(self) -> NamespaceDefaults:
        return NamespaceDefaults(self.config.block_turn_size, self.config.block_decay_lambda)

    async def _after_derivation(self, report: Any) -> None:
        """Work that follows a derivation pass (the topic pass); nothing by default."""
