"""A private PostgreSQL server for the tests: Debian's binaries, a temp dir, a Unix socket.

tests/conftest.py loads this module as a plugin, so any test can ask for:

- ``pg_cluster``: one server per test session (a ``Cluster``: ``url(dbname)``, ``admin()``,
  ``restart()``), made with ``initdb`` and ``pg_ctl`` from ``/usr/lib/postgresql/*/bin`` in
  a temp dir, listening only on a socket in that dir (``listen_addresses=''``: no TCP port,
  nothing shared with a system server), with ``fsync`` off for speed;
- ``pg_url``: a fresh, empty database per test (``CREATE DATABASE … TEMPLATE template0``),
  dropped after it (connections still open are closed by the drop).

The server is stopped at the end of the session, also when tests failed, and on SIGTERM.
``initdb`` refuses to run as root and CI runs as root: then the server runs as the
``postgres`` system user that the Debian package creates (``runuser -u postgres --``), the
temp dir owned by it; the tests, as root, reach its socket all the same. Authentication is
``trust`` (only this machine's users can reach the socket, in a dir no one else knows).

Without the binaries the fixture fails with one line saying to run ``make test`` (which
installs them); a skipped test would hide a missing feature.
"""

import itertools
import os
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType

import psycopg
import pytest

BINARIES = Path("/usr/lib/postgresql")
SUPERUSER = "stratagate"
# fsync off: nothing waits for the disk; a commit is still written to the WAL before it
# returns (synchronous_commit stays on), so a restart as a crash keeps what was committed.
SERVER_SETTINGS = "-c listen_addresses='' -c fsync=off -c full_page_writes=off"
_DATABASE_NUMBERS = itertools.count(1)


@dataclass
class Cluster:
    """A running private server: its binaries, data dir and socket dir."""

    bin: Path
    root: Path
    as_postgres: bool
    log: Path = field(init=False)

    def __post_init__(self) -> None:
        self.log = self.root / "server.log"

    @property
    def data(self) -> Path:
        return self.root / "data"

    def url(self, dbname: str = "postgres") -> str:
        """A libpq URL of ``dbname`` over this server's socket (its dir is the host)."""
        return f"postgresql://{SUPERUSER}@/{dbname}?host={self.root}"

    def admin(self) -> psycopg.Connection:
        """An autocommit connection to the maintenance database (CREATE/DROP DATABASE)."""
        return psycopg.connect(self.url(), autocommit=True)

    @contextmanager
    def database(self, prefix: str, template: str = "template0") -> Iterator[str]:
        """A new database made from ``template`` for the block (its name), dropped after.

        ``FILE_COPY`` copies the template's files whole: ~0.06 s where the default
        (``WAL_LOG``, block by block through the WAL) took ~0.2 s, the checkpoint it costs
        being cheap with ``fsync`` off; the suite's PostgreSQL pass makes one per test."""
        name = f"{prefix}_{os.getpid()}_{next(_DATABASE_NUMBERS)}"
        with self.admin() as admin:
            admin.execute(f"CREATE DATABASE {name} TEMPLATE {template} STRATEGY FILE_COPY")
        try:
            yield name
        finally:
            with self.admin() as admin:
                admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")

    def run(self, tool: str, *args: str) -> None:
        """Run one of the server's binaries as the user that owns the data dir."""
        command = [str(self.bin / tool), *args]
        if self.as_postgres:
            command = ["runuser", "-u", "postgres", "--", *command]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            log = self.log.read_text() if self.log.exists() else ""
            raise RuntimeError(f"{tool} failed: {done.stderr.strip()}\n{log[-2000:]}")

    def start(self) -> None:
        options = f"{SERVER_SETTINGS} -c unix_socket_directories='{self.root}'"
        self.run("pg_ctl", "-D", str(self.data), "-l", str(self.log), "-w", "-o", options, "start")

    def stop(self, mode: str = "fast") -> None:
        self.run("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "stop")

    def restart(self) -> None:
        """Stop (``immediate``: as a crash would) and start again on the same socket."""
        self.stop("immediate")
        self.start()


def server_binaries() -> Path:
    """The newest ``/usr/lib/postgresql/<version>/bin`` holding ``initdb``, or a failure."""
    found = sorted(
        (path.parent for path in BINARIES.glob("*/bin/initdb")),
        key=lambda path: int(path.parent.name) if path.parent.name.isdigit() else 0,
    )
    if not found:
        pytest.fail(
            f"PostgreSQL's server binaries are missing ({BINARIES}/*/bin/initdb): "
            "run `make test`, which installs Debian's postgresql",
            pytrace=False,
        )
    return found[-1]


def new_cluster(bin_dir: Path) -> Cluster:
    """``initdb`` into a fresh temp dir (short: a socket path has a 107-byte limit)."""
    as_postgres = os.geteuid() == 0
    root = Path(tempfile.mkdtemp(prefix="sg-pg-"))
    if as_postgres:
        shutil.chown(root, "postgres", "postgres")
    cluster = Cluster(bin_dir, root, as_postgres)
    cluster.run(
        "initdb", "-D", str(cluster.data), "-U", SUPERUSER, "--auth=trust",
        "--no-sync", "-E", "UTF8", "--locale=C",
    )  # fmt: skip
    return cluster


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[Cluster]:
    cluster = new_cluster(server_binaries())
    cluster.start()
    previous = signal.getsignal(signal.SIGTERM) or signal.SIG_DFL

    def stop_on_sigterm(signum: int, frame: FrameType | None) -> None:
        shut_down(cluster)
        signal.signal(signal.SIGTERM, previous)
        os.kill(os.getpid(), signal.SIGTERM)

    signal.signal(signal.SIGTERM, stop_on_sigterm)
    try:
        yield cluster
    finally:
        signal.signal(signal.SIGTERM, previous)
        shut_down(cluster)


def shut_down(cluster: Cluster) -> None:
    """Stop the server (if it runs) and remove its dir."""
    with suppress(RuntimeError):
        cluster.stop("immediate")
    shutil.rmtree(cluster.root, ignore_errors=True)


@pytest.fixture
def pg_url(pg_cluster: Cluster) -> Iterator[str]:
    """A fresh empty database for one test, as a URL."""
    with pg_cluster.database("test") as name:
        yield pg_cluster.url(name)
