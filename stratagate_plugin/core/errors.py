"""Small exception classes raised deep in core and translated once at each edge."""


class MemoryError_(Exception):
    """Base class of every StrataGate core error (user-facing message in ``str``)."""


class NotFound(MemoryError_):
    """An id that names nothing in this database."""


class InvalidInput(MemoryError_):
    """Input of the wrong shape or type."""


class ReceiptConflict(MemoryError_):
    """A receipt id replayed with a different payload."""


class SchemaTooNew(MemoryError_):
    """The database was written by a newer StrataGate than this one."""


class BlockNotReady(MemoryError_):
    """The operation needs a ready block (derived L0–L2, extraction finished)."""
