"""What every capability shares, and the base its service class stands on."""

from .config import MemoryConfig
from .llm.base import StructuredModel
from .storage import Storage
from .store.turns import NewSpaceDefaults
from .store.units import UnitDatabase


class EngineParts:
    """The database (and the storage contract over it), the settings and the model, held
    once for every capability: a model or settings replaced on the engine are the ones
    each capability uses next."""

    def __init__(
        self, db: UnitDatabase, storage: Storage, config: MemoryConfig, model: StructuredModel
    ) -> None:
        self.db = db
        self.storage = storage
        self.config = config
        self.model = model


class SharedParts:
    """Reading the shared parts: the engine and each capability see the same ones."""

    _parts: EngineParts

    @property
    def db(self) -> UnitDatabase:
        return self._parts.db

    @property
    def storage(self) -> Storage:
        """Every capability's storage operations (the contract of ``core/storage.py``)."""
        return self._parts.storage

    @property
    def config(self) -> MemoryConfig:
        return self._parts.config

    @config.setter
    def config(self, config: MemoryConfig) -> None:
        self._parts.config = config

    @property
    def model(self) -> StructuredModel:
        return self._parts.model

    @model.setter
    def model(self, model: StructuredModel) -> None:
        self._parts.model = model


class ServiceBase(SharedParts):
    """One capability's service: it reads the shared parts and holds nothing else but the
    capabilities it was given at wiring (``memory.py``), never a sibling through a base."""

    def __init__(self, parts: EngineParts) -> None:
        self._parts = parts

    @property
    def _defaults(self) -> NewSpaceDefaults:
        return NewSpaceDefaults(self.config.block_turn_size, self.config.block_decay_lambda)
