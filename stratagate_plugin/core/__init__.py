"""The memory engine: framework-free rule modules, the store, and the façade.

Nothing under ``core`` imports the host, the web app, pluggy, starlette or jinja2
(``tests/test_import_layers.py`` enforces it).

The names in ``__all__`` are the engine's public face: the façade, its configuration,
the errors a caller translates and the records it shows, so the web pages, the CLI and
the plugin can write ``from stratagate_plugin.core import StrataGate, NotFound``. They
load on first use (PEP 562) because the façade pulls in every capability, and importing
``core`` for one error class must not cost ``stratagate --help`` the whole engine.
"""

TYPE_CHECKING = False  # not ``typing``: it alone loads ~20 modules (re, enum, …)

if TYPE_CHECKING:  # the same names, eagerly, for type checkers and editors
    from .config import MemoryConfig
    from .curation.records import ActionResult
    from .errors import (
        BlockNotReady,
        InvalidInput,
        NotFound,
        ReceiptConflict,
        SchemaTooNew,
        StaleEdit,
        StrataGateError,
    )
    from .events.cards import EventCard
    from .llm.base import ModelError
    from .memory import StrataGate
    from .profile.service import ProfileConflict, ProfileUpdate, ProfileView
    from .profile.spaces import SpaceSummary
    from .purge.service import PurgeOutcome, SpacePlan
    from .records import (
        Block,
        BlockMark,
        BlockView,
        Job,
        Message,
        MessageIn,
        ToolTrace,
        TurnReceipt,
    )
    from .retrieval.fused import Retrieved
    from .timeline.service import ConflictPair

__all__ = [  # grouped by home in _HOMES below
    "ActionResult",
    "Block",
    "BlockMark",
    "BlockNotReady",
    "BlockView",
    "ConflictPair",
    "EventCard",
    "InvalidInput",
    "Job",
    "MemoryConfig",
    "Message",
    "MessageIn",
    "ModelError",
    "NotFound",
    "ProfileConflict",
    "ProfileUpdate",
    "ProfileView",
    "PurgeOutcome",
    "ReceiptConflict",
    "Retrieved",
    "SchemaTooNew",
    "SpacePlan",
    "SpaceSummary",
    "StaleEdit",
    "StrataGate",
    "StrataGateError",
    "ToolTrace",
    "TurnReceipt",
]

# the module (relative to ``core``) each public name is taken from: never a ``store`` module
# (tests/test_import_layers.py: only services reach the store)
_HOMES = {
    ".memory": ("StrataGate",),
    ".config": ("MemoryConfig",),
    ".errors": (
        "StrataGateError",
        "NotFound",
        "InvalidInput",
        "ReceiptConflict",
        "StaleEdit",
        "SchemaTooNew",
        "BlockNotReady",
    ),
    ".llm.base": ("ModelError",),
    ".records": (
        "MessageIn",
        "Message",
        "ToolTrace",
        "TurnReceipt",
        "Block",
        "BlockView",
        "BlockMark",
        "Job",
    ),
    ".events.cards": ("EventCard",),
    ".retrieval.fused": ("Retrieved",),
    ".profile.service": ("ProfileConflict", "ProfileView", "ProfileUpdate"),
    ".profile.spaces": ("SpaceSummary",),
    ".timeline.service": ("ConflictPair",),
    ".curation.records": ("ActionResult",),
    ".purge.service": ("PurgeOutcome", "SpacePlan"),
}
_HOME_OF = {name: home for home, names in _HOMES.items() for name in names}


def __getattr__(name: str) -> object:
    """Import a public name's home module on first access and cache the name here."""
    home = _HOME_OF.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(home, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
