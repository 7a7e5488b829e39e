"""The README's "Running on PostgreSQL", run as it stands against the private server.

Every line of its ``sh`` blocks runs: ``createdb``, ``pg_dump`` and ``pg_restore`` are the
server's own binaries, ``stratagate`` the real CLI; the example URL
(``postgresql://mara@db.example.org/NAME``) becomes the private server's database NAME
(made unique per run), and ``~/.stratagate/memory.db`` a memory made for the test. The
profile line and the ``export`` line the section gives are used as written, each naming
the copied memory without ``--db``.
"""

import asyncio
import os
import re
import shlex
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from pg_cluster import SUPERUSER, Cluster
from test_db_copy import made_memory

from stratagate_plugin.cli.main import main

README = Path(__file__).resolve().parents[1] / "README.md"
SECTION = "## Running on PostgreSQL"
EXAMPLE_URL = re.compile(r"postgresql://mara@db\.example\.org/(\w+)")
SERVER_TOOLS = ("createdb", "pg_dump", "pg_restore")


def section() -> str:
    text = README.read_text(encoding="utf-8")
    start = text.index(SECTION)
    return text[start : text.index("\n## ", start + len(SECTION))]


def commands() -> list[list[str]]:
    """Each command line of the section's ``sh`` blocks, its comment dropped."""
    lines = []
    for block in re.findall(r"```sh\n(.*?)```", section(), re.DOTALL):
        lines += [shlex.split(line, comments=True) for line in block.splitlines()]
    return [line for line in lines if line]


class Server:
    """The section's names on the private server: database NAME is a unique one."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster, self.made = cluster, set[str]()

    def name(self, example: str) -> str:
        unique = f"readme_{os.getpid()}_{example}"
        self.made.add(unique)
        return unique

    def url(self, text: str) -> str:
        return EXAMPLE_URL.sub(lambda m: self.cluster.url(self.name(m.group(1))), text)

    def drop(self) -> None:
        with self.cluster.admin() as admin:
            for name in self.made:
                admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@pytest.fixture
def server(pg_cluster: Cluster) -> Iterator[Server]:
    named = Server(pg_cluster)
    try:
        yield named
    finally:
        named.drop()


def run_tool(server: Server, argv: list[str], cwd: Path) -> None:
    """``createdb NAME`` and the dump tools over the private server's socket."""
    if argv[0] == "createdb":
        argv = [argv[0], server.name(argv[1])]
    env = {**os.environ, "PGHOST": str(server.cluster.root), "PGUSER": SUPERUSER}
    tool = [str(server.cluster.bin / argv[0]), *argv[1:]]
    done = subprocess.run(tool, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, (argv, done.stderr)


def test_the_postgresql_section_runs_as_written(
    server: Server,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    memory = tmp_path / "memory.db"
    asyncio.run(made_memory(memory))
    monkeypatch.chdir(tmp_path)
    ran = []
    for line in commands():
        argv = [server.url(word).replace("~/.stratagate/memory.db", str(memory)) for word in line]
        if argv[0] in SERVER_TOOLS:
            run_tool(server, argv, tmp_path)
        else:
            assert argv[0] == "stratagate", line
            assert main(argv[1:]) == 0, (line, capsys.readouterr())
        ran.append(argv[0] if argv[0] != "stratagate" else argv[1])
    assert ran.count("createdb") == 2 and {"db", "doctor", "spaces", "pg_restore"} <= set(ran)
    out = capsys.readouterr().out
    assert "every table checked equal" in out and out.count(": ok (schema") == 2
    assert "10 messages" in out  # the restored copy holds the memory too


def test_the_profile_and_the_environment_lines_name_the_database(
    server: Server,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    text = section()
    run_tool(server, ["createdb", "stratagate"], tmp_path)
    url = server.url(EXAMPLE_URL.search(text).group(0))  # type: ignore[union-attr]
    assert main(["db", "migrate", url]) == 0
    settings = re.search(r"`(settings: \{stratagate-memory: .*?\})`", text)
    exported = re.search(r"`export (STRATAGATE_DATABASE_URL)=(\S+)`", text)
    assert settings is not None and exported is not None
    profile = yaml.safe_load(server.url(settings.group(1)))
    home = Path(os.environ["STRATAGATE_HOME"])
    (home / "profiles").mkdir(parents=True)
    profile["plugins"] = ["stratagate-memory"]
    (home / "profiles" / "default.yml").write_text(yaml.safe_dump(profile), encoding="utf-8")
    assert main(["doctor"]) == 0 and ": ok (schema" in capsys.readouterr().out
    (home / "profiles" / "default.yml").unlink()
    monkeypatch.setenv(exported.group(1), server.url(exported.group(2)))
    assert main(["doctor"]) == 0 and ": ok (schema" in capsys.readouterr().out
    assert not (home / "memory.db").exists()
