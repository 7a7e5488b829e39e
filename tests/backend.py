"""``pytest --backend postgresql``: the whole suite over the private PostgreSQL server.

tests/conftest.py loads this module as a plugin. The default (``--backend sqlite``) changes
nothing. With ``--backend postgresql`` every memory a test opens on a file path
(``StrataGate.open(path)``: the ``memory`` fixture, the CLI's ``--db FILE``, the web app's
and MCP server's profile) opens instead on a database of the private server of
``tests/pg_cluster.py``: one per distinct path per test, so a test that closes and reopens
its file reopens the same database, each a copy of one migrated once per session (a
template copy, ~0.06 s), all dropped after the test. The seam is one function, the
engine's ``memory._open_database`` (``server_files.py``); the processes a test starts (the
CLI, ``stratagate serve``, an MCP server) get the same redirection through
``pg_child/sitecustomize.py``. A test's own ``sqlite3.connect`` of a memory it opened, and
the ``plain`` fixture, read the database through the engine's SQL translation
(``server_sqlite3.py``). No test is edited for it.

Not run on PostgreSQL, each with its reason (``pytest --backend postgresql -rs`` lists them):

- tests marked ``sqlite_only(reason)``, about the SQLite file itself (WAL checkpoints,
  SQLite's write lock, migrations of SQLite files made by hand, the event impact index's
  SQLite tables, FTS5); ``grep -rn sqlite_only tests`` is the list;
- files that run on both backends by themselves in either pass (``BOTH_BY_DESIGN``);
- ``NOT_YET_ON_POSTGRESQL``: tests failing there for a reason still to fix, each with it.

Still on SQLite in that pass: memories opened by a module-scoped fixture (set up before
any test's redirection), the ``Database`` class used directly (the SQLite store's own
tests), and child processes started with a ``PYTHONPATH`` of their own.
"""

import asyncio
import itertools
import os
import sqlite3
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import cast

import pytest
from pg_cluster import Cluster
from server_files import ENV, ServerPlan, redirect_engines
from server_sqlite3 import PlainConnection, redirecting_connect

from stratagate_plugin.core import memory as memory_module
from stratagate_plugin.core.store.postgres.engine_db import EngineDatabase

BACKENDS = ("sqlite", "postgresql")
CHILD_SITE = Path(__file__).resolve().parent / "pg_child"
_TESTS = itertools.count(1)
# Files (or tests, by name) that already run on both backends themselves, in either pass:
# not run again.
BOTH_BY_DESIGN: dict[str, str] = {
    "storage_contract": "the storage contract's suite runs each file on both backends",
    "test_db_copy.py": "copies between a SQLite file and a PostgreSQL database, both ways",
    "test_message_rank.py": "compares a SQLite file's FTS5 with its copy on the private server",
    "test_pg_db.py": "PostgreSQL's unit of work on the private server, in either pass",
    "test_pg_doctor.py": "doctor on SQLite and on the private server, in either pass",
    "test_pg_schema.py": "the two schemas side by side, in either pass",
    "test_pg_readme.py": "copies a SQLite memory to the private server, in either pass",
    "test_an_open_on_postgresql_that_refills_the_index_reports_it": (
        "copies a SQLite memory to the private server, in either pass"
    ),
}

# Tests failing on PostgreSQL for a reason still to fix (a file, a folder or a test by its
# name): not run there. The set only shrinks (empty now).
NOT_YET_ON_POSTGRESQL: dict[str, str] = {}


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--backend",
        choices=BACKENDS,
        default="sqlite",
        help="the database every engine a test opens on a file path runs on (default sqlite)",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "sqlite_only(reason): about the SQLite file itself; not run with --backend postgresql",
    )


def on_postgresql(config: pytest.Config) -> bool:
    return bool(config.getoption("--backend") == "postgresql")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """With ``--backend postgresql``, what is not run there is skipped, with its reason."""
    if not on_postgresql(config):
        return
    for item in items:
        reason = not_on_postgresql(item)
        if reason is not None:
            item.add_marker(pytest.mark.skip(reason=reason))


def not_on_postgresql(item: pytest.Item) -> str | None:
    """Why ``item`` is not run on PostgreSQL, or None."""
    both = _listed(BOTH_BY_DESIGN, item)
    if both is not None:
        return f"both backends already: {both}"
    pending = _listed(NOT_YET_ON_POSTGRESQL, item)
    if pending is not None:
        return f"not yet on PostgreSQL: {pending}"
    marker = item.get_closest_marker("sqlite_only")
    if marker is None:
        return None
    return f"sqlite_only: {marker.kwargs.get('reason') or ''.join(marker.args)}"


def _listed(reasons: dict[str, str], item: pytest.Item) -> str | None:
    """The reason ``reasons`` gives for ``item``'s file, folder or test name, if any."""
    keys = (item.path.name, item.path.parent.name, getattr(item, "originalname", item.name))
    return next((reasons[key] for key in keys if key in reasons), None)


@pytest.fixture(scope="session")
def pg_template(pg_cluster: Cluster) -> Iterator[str]:
    """A database migrated once per session, the template of each test's (copying it is
    ~10× faster than migrating a fresh one)."""
    with pg_cluster.database("template") as name:
        with ThreadPoolExecutor(1) as thread:  # the session's loop may already run
            thread.submit(asyncio.run, _migrated(pg_cluster.url(name))).result()
        yield name


async def _migrated(url: str) -> None:
    await (await EngineDatabase(url).open()).close()


class ServerFiles:
    """One test's memory files, each standing for a database of the private server
    (``server_files.ServerPlan``), and the test's own connections to them."""

    def __init__(self, plan: ServerPlan) -> None:
        self.plan = plan
        self.connections: list[PlainConnection] = []

    def url(self, path: Path | str) -> str:
        """The database standing for ``path`` (made on first use)."""
        return self.plan.database(path)

    def plain(self, path: Path | str) -> Iterator[sqlite3.Connection]:
        """The ``plain`` fixture: a connection to ``path``'s database, closed after."""
        conn = PlainConnection(self.url(path))
        conn.row_factory = sqlite3.Row
        try:
            yield cast(sqlite3.Connection, conn)
        finally:
            conn.close()


@pytest.fixture
def server_files(request: pytest.FixtureRequest) -> Iterator[ServerFiles | None]:
    """This test's memories on the server with ``--backend postgresql``, else None."""
    if not on_postgresql(request.config):
        yield None
        return
    cluster: Cluster = request.getfixturevalue("pg_cluster")
    template: str = request.getfixturevalue("pg_template")
    plan = ServerPlan(cluster.url("{}"), template, f"suite_{os.getpid()}_{next(_TESTS)}")
    files = ServerFiles(plan)
    try:
        yield files
    finally:
        for conn in files.connections:
            conn.close()
        plan.drop_all()


@pytest.fixture(autouse=True)
def _backend(server_files: ServerFiles | None, monkeypatch: pytest.MonkeyPatch) -> None:
    """Engines opened on a path open on the server instead (``--backend postgresql``), in
    this process and in the processes it starts (``pg_child/sitecustomize.py``)."""
    if server_files is None:
        return
    plan = server_files.plan
    monkeypatch.setattr(memory_module, "_open_database", memory_module._open_database)
    redirect_engines(plan)
    monkeypatch.setattr(sqlite3, "connect", redirecting_connect(plan, server_files.connections))
    monkeypatch.setenv(ENV, plan.to_environment())
    path = os.environ.get("PYTHONPATH")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(CHILD_SITE), path])))
