"""The pool's connections: a unit's ``BEGIN`` sent with its first statement, and a check
on checkout that costs a round trip only when the connection may be gone (issue #30).

On a local socket each round trip costs about as much as a short statement. A unit used
to pay three beside its statements: the pool's check of the connection (an empty
statement), ``BEGIN`` and ``COMMIT``. Two of them go:

- ``BEGIN`` waits on the connection (``UnitConnection.pending_begin``) until the unit's
  first statement, and both travel in one pipeline (``UnitCursor``). The transaction's
  guarantees are those of ``BEGIN`` sent alone: nothing runs before it, and PostgreSQL
  takes a REPEATABLE READ snapshot at the first statement after ``BEGIN`` either way. A
  unit that runs no statement sends neither ``BEGIN`` nor ``COMMIT``.
- The check (``checked``) asks the socket, not the server: a backend that ends (the
  server stopped or restarted, ``pg_terminate_backend``) says so and closes its end, so
  the idle connection's socket turns readable. Only then, or after ``IDLE_CHECK_S`` idle
  (a network path may drop a connection silently), does it send the empty statement.
"""

import select
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg_pool import ConnectionPool

IDLE_CHECK_S = 30.0


class UnitConnection(psycopg.Connection[Any]):
    """A pooled connection; ``pending_begin`` is its unit's ``BEGIN`` not yet sent."""

    pending_begin: str | None = None
    returned_at: float = 0.0

    def send_begin(self) -> None:
        """The pending ``BEGIN`` alone (before what cannot share its pipeline)."""
        begin, self.pending_begin = self.pending_begin, None
        if begin is not None:
            self.execute(begin)


class UnitCursor(psycopg.Cursor[Any]):
    """A cursor that sends its connection's pending ``BEGIN`` before its statement, in the
    same round trip where it can."""

    def execute(self, query: Any, params: Any = None, **kwargs: Any) -> "UnitCursor":
        with _begun(self.connection):
            super().execute(query, params, **kwargs)
        return self

    def executemany(self, query: Any, params_seq: Any, **kwargs: Any) -> None:
        with _begun(self.connection):
            super().executemany(query, params_seq, **kwargs)

    def stream(self, query: Any, params: Any = None, **kwargs: Any) -> Any:
        _send_begin(self.connection)
        return super().stream(query, params, **kwargs)

    def copy(self, statement: Any, params: Any = None, **kwargs: Any) -> Any:
        _send_begin(self.connection)
        return super().copy(statement, params, **kwargs)


@contextmanager
def _begun(conn: Any) -> Iterator[None]:
    """The block's statements after the pending ``BEGIN``, in its pipeline if one is."""
    begin = getattr(conn, "pending_begin", None)
    if begin is None:
        yield
        return
    conn.pending_begin = None
    with conn.pipeline():
        conn.execute(begin)
        yield


def _send_begin(conn: Any) -> None:
    if isinstance(conn, UnitConnection):
        conn.send_begin()


def checked(conn: UnitConnection) -> None:
    """The pool's check of a connection taken: raises when it is gone."""
    idle = time.monotonic() - conn.returned_at
    if idle > IDLE_CHECK_S or _has_news(conn):
        ConnectionPool.check_connection(conn)


def returned(conn: UnitConnection) -> None:
    """The pool's reset of a connection given back (and its configuration when new):
    nothing pending, its time noted."""
    conn.pending_begin = None
    conn.returned_at = time.monotonic()


def _has_news(conn: psycopg.Connection[Any]) -> bool:
    """Whether the idle connection's socket has anything to read (an error, its end);
    ``poll``, not ``select``: a server process's descriptors may pass ``FD_SETSIZE``."""
    if conn.closed:
        return True
    if not hasattr(select, "poll"):  # Windows
        return bool(select.select([conn.fileno()], [], [], 0)[0])
    poller = select.poll()
    poller.register(conn.fileno(), select.POLLIN)
    return bool(poller.poll(0))
