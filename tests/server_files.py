"""Which database of the private server stands for a memory file, in a test and its children.

With ``--backend postgresql`` (tests/backend.py) a memory a test opens on a file path opens
on a database instead. The name is the test's prefix and a hash of the path, so the test's
own process and any child process it starts (the CLI, ``stratagate serve``, an MCP server:
``pg_child/sitecustomize.py`` installs the same redirection there, told by ``ENV``) reach
the same database for the same file; whoever opens it first makes it from the migrated
template. The test drops every database of its prefix after it.
"""

import hashlib
import json
import os
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
from psycopg import errors

ENV = "SG_TEST_SERVER_FILES"


@dataclass(frozen=True)
class ServerPlan:
    """Where a test's memories live: the server's URL shape (``{}``: a database's name),
    the migrated template, and the test's own prefix."""

    url_shape: str
    template: str
    prefix: str

    def url(self, name: str) -> str:
        return self.url_shape.format(name)

    def name(self, path: Path | str) -> str:
        digest = hashlib.sha1(str(Path(path).resolve()).encode()).hexdigest()[:16]
        return f"{self.prefix}_{digest}"

    def existing(self, path: Path | str) -> str | None:
        """The URL of the database standing for ``path`` if a memory was opened there."""
        name = self.name(path)
        with psycopg.connect(self.url("postgres"), autocommit=True) as admin:
            return self.url(name) if _exists(admin, name) else None

    def database(self, path: Path | str) -> str:
        """The URL of the database standing for ``path``, made from the template if new."""
        name = self.name(path)
        with psycopg.connect(self.url("postgres"), autocommit=True) as admin:
            if not _exists(admin, name):
                with suppress(errors.DuplicateDatabase):  # another process made it meanwhile
                    admin.execute(
                        f"CREATE DATABASE {name} TEMPLATE {self.template} STRATEGY FILE_COPY"
                    )
        return self.url(name)

    def copy(self, source: Path | str, target: Path | str) -> None:
        """``target``'s database made a copy of ``source``'s (``CREATE DATABASE … TEMPLATE``,
        as sqlite3's backup API copies a file); no connection to ``source`` may be open."""
        made, copied = self.name(target), self.name(source)
        with psycopg.connect(self.url("postgres"), autocommit=True) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {made} WITH (FORCE)")
            admin.execute(f"CREATE DATABASE {made} TEMPLATE {copied} STRATEGY FILE_COPY")
        stand_in(Path(target))

    def drop_all(self) -> None:
        """Drop every database of this test (its processes' connections closed by force)."""
        with psycopg.connect(self.url("postgres"), autocommit=True) as admin:
            names = admin.execute(
                "SELECT datname FROM pg_database WHERE datname LIKE %s", (f"{self.prefix}\\_%",)
            ).fetchall()
            for (name,) in names:
                admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")

    def to_environment(self) -> str:
        return json.dumps([self.url_shape, self.template, self.prefix])

    @classmethod
    def from_environment(cls) -> "ServerPlan | None":
        given = os.environ.get(ENV)
        return cls(*json.loads(given)) if given else None


def stand_in(path: Path) -> None:
    """An empty file where the memory's file would be (its dir made as SQLite's open makes
    it): code that asks whether a memory is there (``Path.exists``) finds it, as on SQLite."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.touch(exist_ok=True)


def _exists(admin: psycopg.Connection[Any], name: str) -> bool:
    found = admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,))
    return found.fetchone() is not None


def redirect_engines(plan: ServerPlan) -> Any:
    """Make ``StrataGate.open`` on a path open ``plan``'s database for it; the original
    function is returned (for a test to put back)."""
    from stratagate_plugin.core import memory
    from stratagate_plugin.core.store.units import is_database_url

    original = memory._open_database

    async def open_on_server(where: Path | str, busy_timeout_s: float | None, *rest: Any) -> Any:
        if is_database_url(where):
            return await original(where, busy_timeout_s, *rest)
        url = plan.database(where)
        stand_in(Path(where))
        return await original(url, busy_timeout_s, *rest)

    memory._open_database = open_on_server  # type: ignore[assignment]
    return original
