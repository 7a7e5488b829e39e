"""Every command on a PostgreSQL URL, named each of the three ways, its password never shown.

The private server's URL (with a password it does not ask for: ``trust``) is given as
``--db``, as the profile's ``database:`` and as ``STRATAGATE_DATABASE_URL``; through each,
the real CLI migrates the database, ingests a conversation, chats with the offline model,
derives, searches, lists spaces and jobs, shows an event and checks the database. Every
row lands on the server (no file is made), and no output holds the password. Which one
applies when several are named is one function's decision (``chosen_database``).
"""

import json
import os
from pathlib import Path

import psycopg
import pytest
import yaml
from webapp import web_app

from stratagate_plugin.cli.common import plugin_database
from stratagate_plugin.cli.main import main
from stratagate_plugin.core.store.units import shown_location, without_passwords
from stratagate_plugin.memory_plugin.runtime import DATABASE_VARIABLE, chosen_database

PASSWORD = "pw-Sekrit-hunter2"
WAYS = ("flag", "profile", "environment")
TURNS = [
    {"role": "user", "content": "I adopted a cat named Miso last week."},
    {"role": "assistant", "content": "Noted."},
    {"role": "user", "content": "My sister Lena works as a nurse in Porto."},
    {"role": "assistant", "content": "Noted."},
]


def with_password(url: str) -> str:
    """``pg_url`` with a user and password (the test server trusts the socket's users)."""
    return url.replace("postgresql://stratagate@", f"postgresql://stratagate:{PASSWORD}@")


class Cli:
    """The real CLI in this process, its database named one of the three ways."""

    def __init__(self, capsys: pytest.CaptureFixture[str], way: str, url: str) -> None:
        self.capsys, self.way, self.url = capsys, way, url
        self.said: list[str] = []

    def __call__(self, *argv: str, code: int = 0) -> str:
        named = ["--db", self.url] if self.way == "flag" else []
        exit_code = main([*argv, *named])
        out, err = self.capsys.readouterr()
        self.said += [out, err]
        assert exit_code == code, (argv, out, err)
        return out


def profile(home: Path, **settings: object) -> None:
    """The default profile: the memory plugin, one-turn blocks, and ``settings``."""
    (home / "profiles").mkdir(parents=True, exist_ok=True)
    section = {"block_turn_size": 1, **settings}
    data = {"plugins": ["stratagate-memory"], "settings": {"stratagate-memory": section}}
    (home / "profiles" / "default.yml").write_text(yaml.safe_dump(data), encoding="utf-8")


@pytest.fixture
def named(
    way: str, pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[str, Path]:
    """The URL, named ``way`` (the profile's, the environment's or, left to ``Cli``, the
    flag), and the home."""
    url, home = with_password(pg_url), Path(os.environ["STRATAGATE_HOME"])
    profile(home, **({"database": url} if way == "profile" else {}))
    if way == "environment":
        monkeypatch.setenv(DATABASE_VARIABLE, url)
    monkeypatch.chdir(tmp_path)
    return url, home


@pytest.mark.parametrize("way", WAYS)
def test_every_command_runs_on_the_server_named_each_way(
    way: str, named: tuple[str, Path], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    url, home = named
    cli = Cli(capsys, way, url)
    if way == "flag":  # `db migrate` names its database as an argument
        assert "this version's schema" in cli_db_migrate(capsys, url, cli)
    else:
        assert "this version's schema" in cli("db", "migrate")
    turns = tmp_path / "turns.json"
    at = {"thread": "t1", "at": "2026-11-01T10:00:00Z"}
    turns.write_text(json.dumps([{**at, **turn} for turn in TURNS]), encoding="utf-8")
    assert "recorded 2 turns" in cli("ingest", str(turns))
    cli("chat", "--message", "Remember that my bike is a blue Gazelle.")
    cli("process")
    assert "Miso" in cli("search", "Miso cat")
    assert "3 messages" not in cli("spaces") and "messages" in cli("spaces")
    assert "succeeded" in cli("jobs")
    [miso] = [e for e in json.loads(cli("events", "--json")) if "Miso" in e["title"]]
    assert "Miso" in cli("show", miso["id"])
    assert ": ok (schema" in cli("doctor")
    with psycopg.connect(url) as conn:
        held = conn.execute("SELECT content FROM messages").fetchall()
    assert any("Gazelle" in content for (content,) in held) and len(held) >= 6
    assert not (home / "memory.db").exists()  # nothing went to the default file
    assert PASSWORD not in "".join(cli.said)


@pytest.mark.parametrize("way", WAYS)
async def test_the_settings_page_shows_the_url_without_its_password(
    way: str, named: tuple[str, Path], tmp_path: Path
) -> None:
    url, _ = named
    with plugin_database(url if way == "flag" else None):  # what serve --db does
        async with web_app(tmp_path) as (_, _host, client):
            page = (await client.get("/memory/settings")).text
    assert shown_location(url) in page and "stratagate:***@" in page and PASSWORD not in page


def cli_db_migrate(capsys: pytest.CaptureFixture[str], url: str, cli: Cli) -> str:
    assert main(["db", "migrate", url]) == 0
    out, err = capsys.readouterr()
    cli.said += [out, err]
    return out


@pytest.mark.parametrize("way", WAYS)
def test_an_unreachable_server_is_one_line_without_its_password(
    way: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"postgresql://me:{PASSWORD}@/memory?host={tmp_path}&port=1"
    profile(Path(os.environ["STRATAGATE_HOME"]), **({"database": url} if way == "profile" else {}))
    if way == "environment":
        monkeypatch.setenv(DATABASE_VARIABLE, url)
    for command in (["spaces"], ["doctor"], ["search", "cat"]):
        argv = [*command, *(["--db", url] if way == "flag" else [])]
        assert main(argv) == 2
        out, err = capsys.readouterr()
        assert err.count("\n") == 1 and "PostgreSQL database memory" in err, err
        assert PASSWORD not in out + err


def test_a_url_typed_wrong_or_out_of_place_shows_no_password(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["spaces", "--db", f"postgresql://me:{PASSWORD} x@host/db"]) == 2
    with pytest.raises(SystemExit):  # argparse's usage error
        main(["spaces", "--bogus", f"postgresql://me:{PASSWORD}@host/db"])
    out, err = capsys.readouterr()
    assert "postgresql://me:***@host/db" in err and PASSWORD not in out + err


def test_the_doctor_says_its_file_repairs_are_for_sqlite(
    pg_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    for repair in ("--restore", "--rebuild-indexes"):
        assert main(["doctor", "--db", with_password(pg_url), repair]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "repair a SQLite file" in err and "pg_restore" in err


@pytest.mark.parametrize(
    ("given", "database", "environment", "chosen"),
    [
        ("postgresql://h/a", "b.db", "postgresql://h/c", "postgresql://h/a"),
        (None, "postgresql://h/b", "postgresql://h/c", "postgresql://h/b"),
        (None, "b.db", "postgresql://h/c", Path("b.db")),
        (None, "", "postgres://h/c", "postgres://h/c"),
        (None, "", "c.db", Path("c.db")),
        (Path("a.db"), "postgresql://h/b", "", Path("a.db")),
        (None, "", "", Path("home/memory.db")),
    ],
)
def test_the_database_is_the_flag_else_the_profile_else_the_environment_else_the_file(
    given: Path | str | None,
    database: str,
    environment: str,
    chosen: Path | str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("STRATAGATE_HOME", "home")
    environ = {DATABASE_VARIABLE: environment} if environment else {}
    assert chosen_database({"database": database}, given, environ) == chosen


@pytest.mark.parametrize(
    ("location", "shown"),
    [
        ("postgresql://u:secret@host/db", "postgresql://u:***@host/db"),
        ("postgres://u:s%40c@h:5432/db?sslmode=require", "postgres://u:***@h:5432/db?sslmode=require"),
        ("postgresql://u@h/db?password=secret&sslmode=require", "postgresql://u@h/db?password=***&sslmode=require"),
        ("postgresql:///db?host=/run/pg", "postgresql:///db?host=/run/pg"),
        ("postgresql://host:5432/db", "postgresql://host:5432/db"),
        ("postgresql://u:se cret@h/db", "postgresql://u:***@h/db"),
        ("/home/me/memory.db", "/home/me/memory.db"),
    ],
)  # fmt: skip
def test_a_location_is_shown_without_its_password(location: str, shown: str) -> None:
    assert shown_location(location) == shown
    assert without_passwords(f"cannot open {location}: refused") == f"cannot open {shown}: refused"
