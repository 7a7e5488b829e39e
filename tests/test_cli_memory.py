"""Managing memory from the command line: search, show, forget/restore, pin/unpin, purge."""

import io
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from stratagate_plugin.cli.main import main


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def db(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    """The demo conversation, recorded and derived, in space ``demo``."""
    path = str(tmp_path / "m.db")
    assert run(capsys, "demo", "--db", path)[0] == 0
    return path


def spring_event(capsys: pytest.CaptureFixture[str], db: str) -> dict[str, Any]:
    _, out, _ = run(capsys, "events", "--db", db, "--namespace", "demo", "--json")
    [event] = [e for e in json.loads(out) if "spring sale" in e["title"].lower()]
    return dict(event)


def searched(capsys: pytest.CaptureFixture[str], db: str, query: str) -> list[dict[str, Any]]:
    code, out, _ = run(capsys, "search", query, "--db", db, "--space", "demo", "--json")
    assert code == 0
    return list(json.loads(out))


def test_search_prints_each_hit_with_its_source_time_and_events(
    capsys: pytest.CaptureFixture[str], db: str
) -> None:
    event = spring_event(capsys, db)
    [source] = event["source_message_ids"]
    code, out, err = run(capsys, "search", "spring sale", "--db", db, "--space", "demo")
    assert code == 0 and err == ""
    first = out.splitlines()[:4]
    assert first[0].startswith(f"1. {source}  [raw+event") and "score" in first[0]
    assert first[1].split()[0] == "2026-11-02T09:10:00+00:00"
    assert "session demo-session  user  block blk_" in first[1]
    assert first[2].strip() == "We decided to move the spring sale to 14 March."
    assert first[3].strip().startswith(f"cited by {event['id']}  Spring sale")
    rows = searched(capsys, db, "spring sale")
    assert rows[0]["message_id"] == source and rows[0]["at"].endswith("+00:00")
    assert rows[0]["events"][0]["id"] == event["id"] and "event" in rows[0]["channels"]
    assert set(rows[0]) >= {"score", "role", "thread", "block", "text", "purged_at"}
    code, out, _ = run(capsys, "search", "spring", "--db", db, "--space", "demo", "-n", "1")
    assert out.startswith("1. ") and "\n2. " not in out
    code, out, _ = run(capsys, "search", "spring", "--db", db)  # chat's space here: empty
    assert code == 0 and out.startswith("(nothing found in memory space sg:project:")


def test_search_refuses_a_limit_below_one(capsys: pytest.CaptureFixture[str], db: str) -> None:
    with pytest.raises(SystemExit) as done:
        run(capsys, "search", "spring", "--db", db, "--limit", "0")
    err = capsys.readouterr().err
    assert done.value.code == 2 and "must be a whole number of at least 1, not '0'" in err


def test_show_an_event_a_block_a_message_and_an_unknown_id(
    capsys: pytest.CaptureFixture[str], db: str
) -> None:
    event = spring_event(capsys, db)
    code, out, _ = run(capsys, "show", event["id"], "--db", db)
    assert code == 0 and out.startswith(f"event {event['id']}  Spring sale moved to 14 March")
    for part in ("status     active", "happened   2027-03-14T00:00:00+00:00", "\nsources\n"):
        assert part in out
    assert "\nlinks\n  (none)" in out and "\nadoptions\n  (never adopted)" in out
    assert "We decided to move the spring sale to 14 March." in out
    code, out, _ = run(capsys, "show", event["source_block_id"], "--db", db, "--json")
    block = json.loads(out)
    assert block["kind"] == "block" and set(block["summaries"]) == {"L0", "L1", "L2"}
    assert event["id"] in [e["id"] for e in block["events"]]
    code, out, _ = run(capsys, "show", event["source_block_id"], "--db", db)
    assert out.startswith(f"block {event['source_block_id']}  space demo") and "tokens" in out
    code, out, _ = run(capsys, "show", event["source_message_ids"][0], "--db", db)
    assert "We decided to move" in out and f"cited by {event['id']}" in out
    code, out, err = run(capsys, "show", "evt_nope", "--db", db)
    assert (code, out, err) == (
        2,
        "",
        "stratagate: error: no event, block or message with id 'evt_nope'\n",
    )


def test_forget_hides_the_event_from_search_and_restore_brings_it_back(
    capsys: pytest.CaptureFixture[str], db: str
) -> None:
    event = spring_event(capsys, db)
    code, out, _ = run(capsys, "forget", event["id"], "--db", db)
    assert code == 0 and out.startswith(f"forgot {event['id']} (now forgotten) (receipt act_")
    assert f"'stratagate restore {event['id']}' brings it back" in out
    rows = searched(capsys, db, "spring sale")
    assert all(e["id"] != event["id"] for row in rows for e in row["events"])
    assert all("event" not in row["channels"] for row in rows if row["text"].startswith("We"))
    assert "We decided to move the spring sale to 14 March." in [r["text"] for r in rows]  # L5
    _, out, _ = run(capsys, "show", event["id"], "--db", db)
    assert "status     forgotten" in out and "forget by user" in out
    code, out, _ = run(capsys, "restore", event["id"], "--db", db, "--json")
    receipt = json.loads(out)
    assert receipt["event"] == {"id": event["id"], "status": "active", "pinned": False}
    assert receipt["receipt"]["kind"] == "restore" and receipt["receipt"]["actor"] == "user"
    assert any(e["id"] == event["id"] for e in searched(capsys, db, "spring sale")[0]["events"])


def test_pin_and_unpin_print_the_new_state_and_a_receipt(
    capsys: pytest.CaptureFixture[str], db: str
) -> None:
    event = spring_event(capsys, db)
    code, out, _ = run(capsys, "pin", event["id"], "--db", db)
    assert code == 0 and out.startswith(f"pinned {event['id']} (now active, pinned) (receipt act_")
    code, out, _ = run(capsys, "unpin", event["id"], "--db", db)
    assert code == 0 and out.startswith(f"unpinned {event['id']} (now active) (receipt act_")
    code, _, err = run(capsys, "pin", "evt_nope", "--db", db)
    assert (code, err) == (2, "stratagate: error: no event with id 'evt_nope'\n")


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_purge_shows_its_plan_asks_first_and_refuses_without_a_terminal(
    capsys: pytest.CaptureFixture[str], db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    event = spring_event(capsys, db)
    [source] = event["source_message_ids"]
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    code, out, err = run(capsys, "forget", event["id"], "--purge", "--db", db)
    assert code == 2 and err.count("\n") == 1 and "pass --yes" in err
    assert source in out and event["id"] in out and "[…]" in out  # which, never the words
    assert "spring sale" not in out.lower()
    monkeypatch.setattr("sys.stdin", Terminal("n\n"))
    code, out, err = run(capsys, "forget", event["id"], "--purge", "--db", db)
    assert code == 1 and source in out and "Purge? [y/N]" in err
    assert err.endswith("nothing was changed\n")
    assert searched(capsys, db, "spring sale")[0]["purged_at"] is None
    monkeypatch.setattr("sys.stdin", Terminal("y\n"))
    code, out, _ = run(capsys, "forget", event["id"], "--purge", "--db", db)
    assert code == 0 and "purged the words from 1 message" in out and "receipt act_" in out
    conn = sqlite3.connect(db)
    [(content,)] = conn.execute("SELECT content FROM messages WHERE id = ?", (source,)).fetchall()
    conn.close()
    assert "[purged]" in content and "spring sale" not in content.lower()
    assert all("We decided" not in row["text"] for row in searched(capsys, db, "spring sale"))
    code, _, err = run(capsys, "restore", event["id"], "--db", db)
    assert code == 2 and "cannot be restored: its source messages were purged" in err


def test_purge_with_yes_prints_the_receipt_as_json(
    capsys: pytest.CaptureFixture[str], db: str
) -> None:
    event = spring_event(capsys, db)
    code, out, err = run(capsys, "forget", event["id"], "--purge", "--yes", "--db", db, "--json")
    receipt = json.loads(out)["receipt"]
    assert code == 0 and event["id"] in err and receipt["kind"] == "purge"  # the plan: stderr
    assert receipt["detail"]["messages"] == event["source_message_ids"]
    assert receipt["detail"]["blocks"] == [event["source_block_id"]]
    code, out, err = run(capsys, "process", "--db", db)  # the purged block's summary, and
    assert code == 0 and out.startswith("ran 3 jobs: 3 succeeded")  # the idle tail sealed
