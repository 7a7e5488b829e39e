"""An index rebuilt at open says so as it starts and as it ends (issue #29: building the
impact indexes of a 500k-message file took minutes of silence): ``core/rebuilds.py``'s
callback, handed to ``StrataGate.open`` or the process's default, which the CLI sets to a
line on stderr."""

import asyncio
import io
import json
import sqlite3
from pathlib import Path

import psycopg
import pytest
from test_db_copy import cli, made_memory
from test_progress import messages_file

from stratagate_plugin.cli.main import main
from stratagate_plugin.cli.progress import print_rebuild, rebuild_line
from stratagate_plugin.core import rebuilds
from stratagate_plugin.core.memory import StrataGate
from stratagate_plugin.core.rebuilds import Rebuild, rebuilding
from stratagate_plugin.core.store import event_term_index


def test_rebuilding_reports_its_start_and_its_time() -> None:
    said: list[Rebuild] = []
    ticks = iter([10.0, 12.5])
    with rebuilding(said.append, "the search index", 3, "messages", clock=lambda: next(ticks)):
        assert said == [Rebuild("the search index", 3, "messages")]
    assert said[1] == Rebuild("the search index", 3, "messages", 2.5)


def test_rebuilding_says_nothing_for_no_items_nor_an_end_after_an_error() -> None:
    said: list[Rebuild] = []
    with rebuilding(said.append, "the search index", 0, "messages"):
        pass
    assert said == []
    with pytest.raises(RuntimeError), rebuilding(said.append, "the index", 2, "events"):
        raise RuntimeError("disk full")
    assert said == [Rebuild("the index", 2, "events")]


@pytest.mark.parametrize(
    ("rebuild", "line"),
    [
        (
            Rebuild("the search index", 500_000, "messages"),
            "stratagate: building the search index for 500,000 messages (once)…",
        ),
        (
            Rebuild("the event search index", 12, "events", 151.2),
            "stratagate: built the event search index for 12 events in 2:31",
        ),
    ],
)
def test_rebuild_line_says_what_how_many_and_how_long(rebuild: Rebuild, line: str) -> None:
    assert rebuild_line(rebuild) == line
    stream = io.StringIO()
    print_rebuild(rebuild, stream)
    assert stream.getvalue() == line + "\n"


def made_stale(db: Path) -> None:
    """Both impact indexes of another version, as a file of older code has them."""
    raw = sqlite3.connect(db)
    with raw:
        raw.execute("UPDATE meta SET value = '0' WHERE key = 'term_index_version'")
        raw.execute("UPDATE meta SET value = '0' WHERE key = ?", (event_term_index.VERSION_KEY,))
    raw.close()


async def opened(db: Path, said: list[Rebuild]) -> None:
    async with await StrataGate.open(db, on_rebuild=said.append):
        pass


def facts_file(path: Path) -> Path:
    """Turns the offline extractor makes events of."""
    at = "2025-01-01T10:00:00+00:00"
    said = ["I moved to Berlin in March.", "My sister Mira works at Siemens as an engineer."]
    entries = [
        {"thread": "t", "role": role, "content": text if role == "user" else "Noted.", "at": at}
        for text in said * 4
        for role in ("user", "assistant")
    ]
    path.write_text(json.dumps(entries))
    return path


def test_an_open_that_rebuilds_reports_to_its_callback(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    assert main(["ingest", str(facts_file(tmp_path / "m.json")), "--db", str(db)]) == 0
    assert main(["process", "--db", str(db)]) == 0
    made_stale(db)
    said: list[Rebuild] = []
    asyncio.run(opened(db, said))
    assert [(r.index, r.unit, r.seconds is None) for r in said] == [
        ("the search index", "messages", True),
        ("the search index", "messages", False),
        ("the event search index", "events", True),
        ("the event search index", "events", False),
    ]
    assert said[0].items == 16 and said[2].items > 0
    again: list[Rebuild] = []
    asyncio.run(opened(db, again))
    assert again == []  # built once


def test_the_command_line_prints_a_rebuild_on_stderr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "m.db")
    assert main(["ingest", str(messages_file(tmp_path / "m.json", 7)), "--db", db]) == 0
    made_stale(Path(db))
    capsys.readouterr()
    assert main(["blocks", "--db", db]) == 0
    out, err = capsys.readouterr()
    lines = [line for line in err.splitlines() if "search index" in line]
    assert lines[0] == "stratagate: building the search index for 14 messages (once)…"
    assert lines[1].startswith("stratagate: built the search index for 14 messages in 0:0")
    assert "search index" not in out
    assert rebuilds.default_report() is rebuilds.quiet  # as found: the library stays silent


async def test_an_open_on_postgresql_that_refills_the_index_reports_it(
    tmp_path: Path, pg_url: str
) -> None:
    await made_memory(tmp_path / "m.db")
    assert cli("db", "copy", str(tmp_path / "m.db"), pg_url).returncode == 0
    with psycopg.connect(pg_url) as conn:
        conn.execute("UPDATE meta SET value = '0' WHERE key = 'term_index_version'")
        conn.execute("UPDATE meta SET value = '0' WHERE key = %s", (event_term_index.VERSION_KEY,))
        events = conn.execute("SELECT count(*) FROM events").fetchone()[0]
    said: list[Rebuild] = []
    async with await StrataGate.open(pg_url, on_rebuild=said.append):
        pass
    assert [(r.index, r.items, r.unit, r.seconds is None) for r in said] == [
        ("the search index", 10, "messages", True),
        ("the search index", 10, "messages", False),
        ("the event search index", events, "events", True),
        ("the event search index", events, "events", False),
    ]
    assert events > 0
