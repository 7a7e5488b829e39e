"""A PostgreSQL database: a pool of sync connections, each unit one transaction on a thread.

The same contract as ``core/store/db.py``'s ``Database``: ``write(unit)`` and ``read(query)``
run a plain function over a connection inside one transaction and return what it returns,
and ``close()``. Row modules for PostgreSQL are therefore sync functions over a
``psycopg.Connection``, as SQLite's are over a ``sqlite3.Connection``.

Each unit runs on a thread of this database's own executor, as many threads as the pool
has connections, so a unit waiting for a connection waits in the executor's queue and
never holds a thread of the event loop's default executor. Connections are autocommit;
a unit opens its own transaction with the level it needs (a write READ COMMITTED unless
told otherwise, a read REPEATABLE READ and READ ONLY so it sees one snapshot) and commits
it or rolls it back whole. Rows are ``Row``: by name or by index, like ``sqlite3.Row``.

A connection lost mid-unit (the backend terminated, the server restarted, the network
gone) raises one ``StorageError`` line naming the database (never its password); the
unit is rolled back by the server, the broken connection is dropped by the pool, and each
connection is checked as it is taken (``pooled.checked``: a round trip only when its
socket says the server ended it, or after a long idle), so the next unit works once the
server answers. A unit's ``BEGIN`` travels with its first statement (``pooled.py``).
Errors that are the caller's (a constraint, bad SQL) are raised as they are.
"""

import asyncio
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import psycopg
from psycopg import IsolationLevel
from psycopg.conninfo import conninfo_to_dict
from psycopg.rows import RowMaker
from psycopg_pool import ConnectionPool, PoolTimeout

from ...errors import StorageError, StrataGateError
from ..units import has_password, shown_location
from .migrations import migrate
from .pooled import UnitConnection, UnitCursor, checked, returned

T = TypeVar("T")
DEFAULT_CONNECTIONS = 4
CONNECT_TIMEOUT_S = 10
POOL_TIMEOUT_S = 30.0
_BEGIN = {
    IsolationLevel.READ_COMMITTED: "BEGIN ISOLATION LEVEL READ COMMITTED",
    IsolationLevel.REPEATABLE_READ: "BEGIN ISOLATION LEVEL REPEATABLE READ",
    IsolationLevel.SERIALIZABLE: "BEGIN ISOLATION LEVEL SERIALIZABLE",
}
_BEGIN_READ = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"


class Row(Sequence[Any]):
    """One result row, read by column name (``row["id"]``) or position (``row[0]``)."""

    __slots__ = ("_names", "_values")

    def __init__(self, names: dict[str, int], values: Sequence[Any]) -> None:
        self._names = names
        self._values = values

    def __getitem__(self, key: Any) -> Any:
        return self._values[self._names[key] if isinstance(key, str) else key]

    def __iter__(self) -> Iterator[Any]:
        """The values themselves: ``Sequence``'s own walk calls ``__getitem__`` a value at a
        time, which cost bulk reads (an index's postings, flattened for numpy) ~1 µs each."""
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def keys(self) -> list[str]:
        return list(self._names)

    def __eq__(self, other: object) -> bool:
        """Equal to a row of the same columns and values, as ``sqlite3.Row`` is."""
        if not isinstance(other, Row):
            return NotImplemented
        return self.keys() == other.keys() and tuple(self._values) == tuple(other._values)

    def __hash__(self) -> int:
        return hash((tuple(self._names), tuple(self._values)))


def row_factory(cursor: psycopg.Cursor[Any]) -> RowMaker[Row]:
    names = {column.name: index for index, column in enumerate(cursor.description or [])}
    return lambda values: Row(names, values)


def session_options(url: str) -> str:
    """The URL's own ``options``, then ``jit=off``. The engine's statements are short, but
    the planner's cost of one over a large table (an open tail's estimate at 500k
    messages) passed ``jit_above_cost``, and compiling it took ~14 ms of a 0.1 ms
    statement, in every recall."""
    own = str(conninfo_to_dict(url).get("options") or "")
    return f"{own} -c jit=off".strip()


class PostgresDatabase:
    """An open StrataGate database on a PostgreSQL server, named by a libpq URL."""

    def __init__(self, url: str, connections: int = DEFAULT_CONNECTIONS) -> None:
        """``connections``: the pool's size, and so how many units run at once."""
        self.url = url
        self.name = database_label(url)
        self.connections = connections
        self._pool: ConnectionPool[UnitConnection] | None = None
        self._threads: ThreadPoolExecutor | None = None

    async def open(self) -> "PostgresDatabase":
        """Reach the server (one line if it cannot be reached), fill the pool, migrate."""
        await asyncio.to_thread(self._probe)
        self._threads = ThreadPoolExecutor(self.connections, thread_name_prefix="stratagate-pg")
        self._pool = ConnectionPool(
            self.url,
            connection_class=UnitConnection,
            kwargs={
                "autocommit": True,
                "row_factory": row_factory,
                "cursor_factory": UnitCursor,
                "options": session_options(self.url),
            },
            min_size=self.connections,
            max_size=self.connections,
            open=False,
            configure=returned,
            check=checked,
            reset=returned,
            timeout=POOL_TIMEOUT_S,
            name=self.name,
        )
        try:
            await self._on_thread(self._fill_pool)
            await self._on_thread(self._with_connection, migrate)
        except BaseException:
            await self.close()
            raise
        return self

    async def close(self) -> None:
        """Stop the threads (a unit still running finishes first), then the pool."""
        threads, self._threads = self._threads, None
        pool, self._pool = self._pool, None
        if threads is not None:
            await asyncio.to_thread(threads.shutdown, True)
        if pool is not None:
            await asyncio.to_thread(pool.close)

    async def __aenter__(self) -> "PostgresDatabase":
        return await self.open()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def write(
        self,
        unit: Callable[[psycopg.Connection[Row]], T],
        isolation: IsolationLevel = IsolationLevel.READ_COMMITTED,
    ) -> T:
        """Run ``unit`` as one transaction at ``isolation``: committed whole, or rolled back
        whole when it raises."""
        return await self._on_thread(
            self._with_connection, _in_transaction, _BEGIN[isolation], unit
        )

    async def read(self, query: Callable[[psycopg.Connection[Row]], T]) -> T:
        """Run ``query`` in one READ ONLY snapshot (REPEATABLE READ): every statement sees
        the database as it was at the first, whatever commits beside it."""
        return await self._on_thread(self._with_connection, _in_transaction, _BEGIN_READ, query)

    async def outside_transaction(self, fn: Callable[[psycopg.Connection[Row]], T]) -> T:
        """``fn`` on a pooled (autocommit) connection in no transaction: what PostgreSQL
        refuses inside one (``VACUUM``, ``CHECKPOINT``)."""
        return await self._on_thread(self._with_connection, fn)

    async def _on_thread(self, fn: Callable[..., T], *args: Any) -> T:
        if self._threads is None:
            raise StrataGateError("database is not open")
        return await asyncio.get_running_loop().run_in_executor(self._threads, fn, *args)

    def _with_connection(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(connection, *args)`` on a pooled connection; a lost connection or an
        unreachable server as one ``StorageError`` line."""
        if self._pool is None:
            raise StrataGateError("database is not open")
        try:
            with self._pool.connection() as conn:
                try:
                    return fn(conn, *args)
                except psycopg.Error as error:
                    raise self._translated(conn, error) from error
        except PoolTimeout as error:
            raise StorageError(
                f"{self.name}: no connection within {POOL_TIMEOUT_S:g} s ({error})"
            ) from None

    def _translated(self, conn: psycopg.Connection[Any], error: psycopg.Error) -> Exception:
        """``error`` itself unless the connection is gone: then the unit was not committed
        (the server rolls back a transaction whose connection drops)."""
        if not (conn.broken or conn.closed):
            return error
        return StorageError(
            f"{self.name}: the connection was lost mid-transaction ({first_line(error)}); "
            "the unit was rolled back"
        )

    def _fill_pool(self) -> None:
        assert self._pool is not None
        try:
            self._pool.open(wait=True, timeout=POOL_TIMEOUT_S)
        except PoolTimeout as error:
            raise StorageError(f"cannot open {self.name}: {first_line(error)}") from None

    def _probe(self) -> None:
        """Connect once before the pool exists: the pool would only say it timed out."""
        try:
            psycopg.connect(self.url, connect_timeout=CONNECT_TIMEOUT_S).close()
        except psycopg.Error as error:
            raise StorageError(f"cannot open {self.name}: {first_line(error)}") from None


def _in_transaction(
    conn: UnitConnection, begin: str, unit: Callable[[psycopg.Connection[Row]], T]
) -> T:
    """``unit`` in one transaction opened by ``begin``, sent with its first statement: a
    unit that sent none has nothing to commit or roll back."""
    conn.pending_begin = begin
    try:
        result = unit(conn)
    except BaseException:
        if conn.pending_begin is None and not (conn.broken or conn.closed):
            conn.execute("ROLLBACK")
        raise
    finally:
        began, conn.pending_begin = conn.pending_begin is None, None
    if began:
        _commit(conn)
    return result


def _commit(conn: UnitConnection) -> None:
    try:
        conn.execute("COMMIT")
    except psycopg.OperationalError as error:
        if conn.broken or conn.closed:  # the server may have committed before it went
            raise StorageError(
                f"the connection was lost while committing ({first_line(error)}); "
                "whether the unit was committed is unknown"
            ) from error
        raise


def database_label(url: str) -> str:
    """``PostgreSQL database NAME on HOST``: what an error names (no user, no password)."""
    try:
        parts = conninfo_to_dict(url)
    except psycopg.ProgrammingError as error:  # libpq quotes the part it could not read
        detail = "check its form" if has_password(url) else first_line(error)
        raise StorageError(f"not a PostgreSQL URL ({detail}): {shown_location(url)}") from None
    host = parts.get("host") or "the default socket"
    return f"PostgreSQL database {parts.get('dbname') or '(default)'} on {host}"


def first_line(error: BaseException) -> str:
    lines = str(error).strip().splitlines()
    return lines[0] if lines else type(error).__name__
