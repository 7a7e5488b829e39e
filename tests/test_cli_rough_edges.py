"""The CLI's rough edges (issue 27): no-op actions, empty searches, markers, filters,
``import --json``, and the correct/conflicts/profile commands."""

import asyncio
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from stratagate_plugin.cli.main import main
from stratagate_plugin.core.memory import StrataGate


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


def events(capsys: pytest.CaptureFixture[str], db: str, *extra: str) -> list[dict[str, Any]]:
    code, out, err = run(capsys, "events", "--db", db, "--space", "demo", "--json", *extra)
    assert code == 0, err
    return list(json.loads(out))


def spring_event(capsys: pytest.CaptureFixture[str], db: str) -> dict[str, Any]:
    [event] = [e for e in events(capsys, db) if "spring sale" in e["title"].lower()]
    return event


def receipt_count(db: str) -> int:
    with sqlite3.connect(db) as raw:
        return int(raw.execute("SELECT count(*) FROM memory_actions").fetchone()[0])


@pytest.mark.parametrize("kind", ["restore", "unpin"])
def test_an_action_with_nothing_to_do_says_so_and_writes_no_receipt(
    capsys: pytest.CaptureFixture[str], db: str, kind: str
) -> None:
    event = spring_event(capsys, db)
    before = receipt_count(db)
    code, out, err = run(capsys, kind, event["id"], "--db", db)
    assert code == 1 and err == ""
    assert out.startswith("nothing to do: ") and "no receipt written" in out
    assert "receipt act_" not in out
    code, out, _ = run(capsys, kind, event["id"], "--db", db, "--json")
    body = json.loads(out)
    assert code == 1 and body["receipt"] is None and body["event"]["id"] == event["id"]
    assert receipt_count(db) == before
    _, out, _ = run(capsys, "show", event["id"], "--db", db)
    assert "\nmemory actions\n  (none)" in out


def test_restore_says_the_event_is_not_forgotten(
    capsys: pytest.CaptureFixture[str], db: str
) -> None:
    event = spring_event(capsys, db)
    _, out, _ = run(capsys, "restore", event["id"], "--db", db)
    assert out.strip() == (
        f"nothing to do: {event['id']} is not forgotten (it is active); no receipt written"
    )
    _, out, _ = run(capsys, "unpin", event["id"], "--db", db)
    assert f"{event['id']} is not pinned" in out


@pytest.mark.parametrize("query", ["", "   ", "\t\n"])
def test_search_for_nothing_is_a_one_line_error(
    capsys: pytest.CaptureFixture[str], db: str, query: str
) -> None:
    code, out, err = run(capsys, "search", query, "--db", db, "--space", "demo")
    assert (code, out) == (2, "")
    assert err == "stratagate: error: search needs words to look for; the query is empty\n"


def correct_with_the_core(db: str, event_id: str) -> str:
    """Supersede the event the way the web's correct form does; the new event's id."""

    async def correct() -> str:
        async with await StrataGate.open(Path(db)) as memory:
            result = await memory.curation.correct_event(
                event_id, title="Spring sale on 21 March", summary="Moved again, to 21 March."
            )
            return result.card.id

    return asyncio.run(correct())


def test_events_and_search_mark_pinned_and_superseded_events(
    capsys: pytest.CaptureFixture[str], db: str
) -> None:
    event = spring_event(capsys, db)
    assert run(capsys, "pin", event["id"], "--db", db)[0] == 0
    _, out, _ = run(capsys, "events", "--db", db, "--space", "demo")
    [line] = [line for line in out.splitlines() if line.startswith(event["id"])]
    assert "active, pinned" in line
    _, out, _ = run(capsys, "search", "spring sale", "--db", db, "--space", "demo")
    assert f"cited by {event['id']}  Spring sale moved to 14 March [pinned]" in out
    newer = correct_with_the_core(db, event["id"])
    _, out, _ = run(capsys, "search", "spring sale", "--db", db, "--space", "demo")
    assert f"cited by {event['id']}  Spring sale moved to 14 March [superseded, pinned]" in out
    assert f"cited by {newer}  Spring sale on 21 March\n" in out  # the current one: unmarked
    _, out, _ = run(capsys, "show", event["source_message_ids"][0], "--db", db)
    assert f"cited by {event['id']}  Spring sale moved to 14 March [superseded, pinned]" in out
    rows = json.loads(run(capsys, "search", "spring", "--db", db, "--space", "demo", "--json")[1])
    cited = {e["id"]: e for row in rows for e in row["events"]}
    assert (cited[event["id"]]["status"], cited[event["id"]]["pinned"]) == ("superseded", True)


def titles(capsys: pytest.CaptureFixture[str], db: str, *filters: str) -> list[str]:
    return [e["title"] for e in events(capsys, db, *filters)]


def test_events_filter_by_type_status_since_and_participant(
    capsys: pytest.CaptureFixture[str], db: str
) -> None:
    assert titles(capsys, db, "--type", "decision") == ["Spring sale moved to 14 March"]
    assert titles(capsys, db, "--participant", "Mara") == [
        "The user runs a small ceramics studio in Leeds"
    ]
    assert titles(capsys, db, "--since", "2026-11-15") == [  # newest first
        "Spring sale moved to 14 March",
        "The user starts evening classes on Tuesdays",
    ]
    assert titles(capsys, db, "--status", "forgotten") == []
    event = spring_event(capsys, db)
    run(capsys, "forget", event["id"], "--db", db)
    assert titles(capsys, db, "--status", "forgotten") == [event["title"]]
    assert event["title"] not in titles(capsys, db, "--type", "decision")
    assert titles(capsys, db, "--type", "decision", "--all") == [event["title"]]
    code, out, _ = run(capsys, "events", "--db", db, "--space", "demo", "--type", "meeting")
    assert (code, out) == (0, "(no events match these filters)\n")
    code, out, _ = run(capsys, "events", "--db", db, "--space", "demo", "--participant", "Mara")
    assert code == 0 and "The user runs a small ceramics studio in Leeds" in out


@pytest.mark.parametrize(
    ("option", "value", "error"),
    [
        ("--type", "nope", "type must be one of decision, "),
        ("--status", "gone", "status must be one of live, "),
        ("--since", "notadate", "since must be an ISO-8601 date or time, not 'notadate'"),
    ],
)
def test_a_bad_events_filter_is_a_one_line_error(
    capsys: pytest.CaptureFixture[str], db: str, option: str, value: str, error: str
) -> None:
    code, out, err = run(capsys, "events", "--db", db, "--space", "demo", option, value)
    assert (code, out) == (2, "") and err.startswith(f"stratagate: error: {error}")
    assert err.count("\n") == 1


FACTS = json.dumps(
    {
        "schemaVersion": "stratagate.external-memory.v2",
        "candidates": [
            {"title": "Lives in Lyon", "summary": "The user lives in Lyon."},
            {"title": "Works at Acme", "summary": "The user is a data engineer at Acme."},
        ],
    }
)


def test_import_json_previews_commits_and_undoes_as_json(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    source, db = tmp_path / "facts.json", str(tmp_path / "m.db")
    source.write_text(FACTS, encoding="utf-8")
    where = ("--db", db, "--space", "imported", "--json")
    code, out, _ = run(capsys, "import", str(source), *where)
    preview = json.loads(out)  # stdout is the JSON and nothing else
    assert code == 0 and preview["batch"] is None
    assert [item["candidate"]["title"] for item in preview["job"]["items"]] == [
        "Lives in Lyon",
        "Works at Acme",
    ]
    assert all(item["action"] == "ADD" for item in preview["job"]["items"])
    assert preview["plan"]["written"] == 2 and preview["plan"]["ignored"] == 0
    code, out, _ = run(capsys, "import", "--commit", "--job", preview["job"]["id"], *where)
    committed = json.loads(out)
    assert code == 0 and committed["batch"]["imported_count"] == 2
    assert committed["batch"]["job_id"] == preview["job"]["id"]
    assert len(committed["batch"]["event_ids"]) == 2
    batch = committed["batch"]["id"]
    code, out, _ = run(capsys, "import", "--undo", batch, *where)
    undone = json.loads(out)["undo"]
    assert code == 0 and undone["batch_id"] == batch and len(undone["removed_event_ids"]) == 2


def test_correct_writes_a_superseding_card_and_prints_its_receipt(
    capsys: pytest.CaptureFixture[str], db: str
) -> None:
    event = spring_event(capsys, db)
    code, out, err = run(
        capsys, "correct", event["id"], "--db", db, "--title", "Spring sale on 21 March",
        "--happened", "2027-03-21",
    )  # fmt: skip
    assert code == 0 and err == ""
    assert out.startswith(f"corrected {event['id']}: evt_") and "(receipt act_" in out
    [new] = events(capsys, db, "--type", "decision", "--status", "active")
    assert new["title"] == "Spring sale on 21 March" and new["summary"] == event["summary"]
    assert new["temporal"]["happened_start"] == "2027-03-21T00:00:00+00:00"
    assert new["temporal"]["supersedes_event_ids"] == [event["id"]]
    _, out, _ = run(capsys, "show", event["id"], "--db", db)
    assert "status     superseded" in out and "correct by user" in out
    code, out, err = run(capsys, "correct", new["id"], "--db", db)
    assert code == 2 and "say what to correct" in err
    code, out, err = run(capsys, "correct", new["id"], "--db", db, "--title", " ")
    assert code == 2 and err == "stratagate: error: a correction needs a title and a summary\n"


def mark_a_conflict(db: str) -> None:
    """The agent remembers the studio's hours differently: a conflict with the demo's card."""

    async def remember() -> None:
        async with await StrataGate.open(Path(db)) as memory:
            said = "The studio opens at 11am on Saturdays, not 10am."
            remembered = await memory.remember.save("demo", "demo-session", said)
            assert remembered.action == "CONFLICT_MARKED"

    asyncio.run(remember())


@pytest.mark.parametrize("keep", ["A", "b", "both"])
def test_conflicts_lists_the_pairs_and_resolves_one(
    capsys: pytest.CaptureFixture[str], db: str, keep: str
) -> None:
    where = ("--db", db, "--space", "demo")
    code, out, _ = run(capsys, "conflicts", *where)
    assert (code, out) == (0, "(no conflicts in memory space demo)\n")
    mark_a_conflict(db)
    code, out, _ = run(capsys, "conflicts", *where)
    lines = out.splitlines()
    assert code == 0 and lines[0].startswith("1. A evt_") and "11am" in lines[0]
    assert lines[1].startswith("   B evt_") and "Studio opens at 10am on Saturdays" in lines[1]
    [pair] = json.loads(run(capsys, "conflicts", *where, "--json")[1])
    a, b = pair["a"]["id"], pair["b"]["id"]
    code, out, err = run(capsys, "conflicts", *where, "--resolve", a, "--keep", keep)
    assert code == 0 and err == "" and out.startswith("resolved the conflict of ")
    assert "(receipt act_" in out
    statuses = {e["id"]: e["status"] for e in events(capsys, db, "--status", "all")}
    expected = {"A": ("active", "superseded"), "b": ("superseded", "active")}
    assert (statuses[a], statuses[b]) == expected.get(keep, ("active", "active"))
    assert run(capsys, "conflicts", *where)[1] == "(no conflicts in memory space demo)\n"
    code, _, err = run(capsys, "conflicts", *where, "--resolve", a, "--keep", "both")
    assert code == 2 and err.startswith(f"stratagate: error: event {a} has no conflict")


def test_conflicts_resolve_needs_keep(capsys: pytest.CaptureFixture[str], db: str) -> None:
    code, _, err = run(capsys, "conflicts", "--db", db, "--space", "demo", "--resolve", "evt_x")
    assert code == 2 and "--resolve EVT goes with --keep A|B|both" in err


def test_profile_shows_sets_and_clears_a_field_with_its_revision(
    capsys: pytest.CaptureFixture[str], db: str
) -> None:
    code, out, err = run(capsys, "profile", "set", "current_city", "Paris", "--db", db)
    assert (code, out, err) == (0, "set current_city to 'Paris' (revision 1)\n", "")
    code, out, _ = run(capsys, "profile", "set", "current_city", "Paris", "--db", db)
    assert code == 1 and out.startswith("nothing to do: current_city already holds this value")
    _, out, _ = run(capsys, "profile", "--db", db)
    assert any(line.split() == ["current_city", "r1", "Paris"] for line in out.splitlines())
    code, out, _ = run(capsys, "profile", "clear", "current_city", "--db", db)
    assert (code, out) == (0, "cleared current_city (revision 2)\n")
    code, out, _ = run(capsys, "profile", "clear", "current_city", "--db", db)
    assert (code, out) == (1, "nothing to do: current_city is already empty (revision 2)\n")
    view = json.loads(run(capsys, "profile", "--db", db, "--json")[1])
    assert view["values"]["current_city"] == "" and view["revisions"]["current_city"] == 2
    with sqlite3.connect(db) as raw:  # the web page's change history has both edits
        assert raw.execute("SELECT count(*) FROM profile_changes").fetchone()[0] == 2


@pytest.mark.parametrize(
    ("argv", "error"),
    [
        (("set", "nope", "x"), "unknown profile field 'nope'"),
        (("set", "current_city", "  "), "set needs a value; 'stratagate profile clear"),
        (("clear",), "name the field to clear"),
        (("clear", "current_city", "x"), "clear takes only the field's name"),
    ],
)
def test_a_bad_profile_edit_is_one_line_and_changes_nothing(
    capsys: pytest.CaptureFixture[str], db: str, argv: tuple[str, ...], error: str
) -> None:
    code, out, err = run(capsys, "profile", *argv, "--db", db)
    assert (code, out) == (2, "") and err.startswith(f"stratagate: error: {error}")
    view = json.loads(run(capsys, "profile", "--db", db, "--json")[1])
    assert set(view["revisions"].values()) == {0}
