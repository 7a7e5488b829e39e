"""Small exception classes raised deep in core and translated once at each edge."""


class StrataGateError(Exception):
    """Base of every error the engine raises for its caller: a user-facing message in ``str``."""


class NotFound(StrataGateError):
    """An id that names nothing in this database."""


class InvalidInput(StrataGateError):
    """Input of the wrong shape or type."""


class ReceiptConflict(StrataGateError):
    """A receipt id replayed with a different payload."""


class SchemaTooNew(StrataGateError):
    """The database was written by a newer StrataGate than this one."""


class BlockNotReady(StrataGateError):
    """The operation needs a ready block (derived L0–L2, extraction finished)."""
