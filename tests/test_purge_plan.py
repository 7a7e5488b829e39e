"""A purge erases the words it was given and nothing else (issue 25): planned from an event
with wrong sources, from a message, or from a text; its receipt keeps a hash, never the
words; a purge interrupted after its commit is finished at the next open."""

import asyncio
import io
import json
import sqlite3
from datetime import datetime
from pathlib import Path

import pytest

from stratagate_plugin.cli.main import main
from stratagate_plugin.core.clock import utc_now
from stratagate_plugin.core.curation.actions import PURGE_RULES
from stratagate_plugin.core.errors import InvalidInput
from stratagate_plugin.core.events.documents import EVENT_RULES
from stratagate_plugin.core.memory import StrataGate
from stratagate_plugin.core.purge.words import Needles, purge_hash
from stratagate_plugin.core.store import purge_rows
from stratagate_plugin.core.store.purge_rows import JOURNAL_KEY
from stratagate_plugin.core.store.sqlite.topics import SqliteTopicsTransaction
from stratagate_plugin.core.topics.sync import sync_space

SAID = [
    "My mother lives in Lyon and visits every spring.",
    "My licence plate is SUA12345, please remember it.",
    "I hate cilantro in my tacos.",
]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def home(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> Path:
    """Three things said and sealed, derived, and the plate asked back in another session."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("sys.stdin", io.StringIO("".join(f"{x}\n" for x in [*SAID, "/exit"])))
    assert run(capsys, "chat", "--session", "a")[0] == 0
    assert run(capsys, "process")[0] == 0
    code, out, _ = run(capsys, "chat", "--session", "b", "--message", "What is my licence plate?")
    assert code == 0 and "SUA12345" in out  # the agent's echo
    return tmp_path / "home"


def contents(home: Path) -> dict[str, str]:
    with sqlite3.connect(home / "memory.db") as conn:
        return dict(conn.execute("SELECT id, content FROM messages ORDER BY pk").fetchall())


def plate_event(capsys: pytest.CaptureFixture[str]) -> dict[str, str]:
    _, out, _ = run(capsys, "events", "--json")
    [event] = [e for e in json.loads(out) if "SUA12345" in e["title"]]
    return dict(event)


def test_a_purge_planned_from_a_wrong_source_event_erases_its_words_and_nothing_else(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    event = plate_event(capsys)
    messages = contents(home)
    by_text = {text: key for key, text in messages.items()}
    with sqlite3.connect(home / "memory.db") as conn:  # the sources the truth issue got wrong
        conn.executemany(
            "INSERT OR IGNORE INTO event_sources(event_id, message_id, position) VALUES (?, ?, ?)",
            [(event["id"], by_text[SAID[0]], 5), (event["id"], by_text[SAID[2]], 6)],
        )
    code, out, err = run(capsys, "forget", event["id"], "--purge", "--yes")
    assert code == 0, err
    after = contents(home)
    changed = {key for key in messages if after[key] != messages[key]}
    assert all("SUA12345" not in text for text in after.values())
    assert changed == {key for key, text in messages.items() if "SUA12345" in text}
    assert len(changed) == 2  # the person's own words and the agent's echo
    assert after[by_text[SAID[0]]] == SAID[0] and after[by_text[SAID[2]]] == SAID[2]
    code, out, _ = run(capsys, "search", "SUA12345", "--json")
    assert "SUA12345" not in out
    for line in (SAID[0], SAID[2]):
        _, out, _ = run(capsys, "search", line, "--json")
        assert line in [hit["text"] for hit in json.loads(out)]
    _, out, _ = run(capsys, "chat", "--session", "c", "--message", "What is my licence plate?")
    assert "SUA12345" not in out


def test_purge_of_a_message_erases_it_and_its_echoes_and_the_receipt_keeps_a_hash(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    by_text = {text: key for key, text in contents(home).items()}
    code, out, err = run(capsys, "purge", "--message", by_text[SAID[1]], "--yes", "--json")
    assert code == 0, err
    outcome = json.loads(out)
    detail = outcome["receipt"]["detail"]
    assert purge_hash(SAID[1]) in detail["hashes"] and len(detail["messages"]) == 2
    assert "SUA12345" not in out and outcome["left"] == {}
    code, listed, _ = run(capsys, "purge", "--check", purge_hash(SAID[1]))
    assert code == 0 and outcome["receipt"]["id"] in listed
    code, _, _ = run(capsys, "purge", "--check", "--text", "sua12345")
    assert code == 0
    assert contents(home)[by_text[SAID[0]]] == SAID[0]


def test_check_reports_the_words_while_they_are_still_stored(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "purge", "--check", "--text", "SUA12345")
    assert code == 1 and "STILL FOUND" in out and "b.jsonl" in out
    assert "message_fts (index terms)" in out and "event_fts (index terms)" in out
    assert "messages.content" in out and "blocks.l4_readable" in out


@pytest.mark.sqlite_only(reason="the SQLite file's own bytes (free pages, WAL) are checked")
def test_check_reports_the_words_while_the_file_still_holds_them(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "purge", "--check", "--text", "SUA12345")
    assert code == 1 and "memory.db" in out


def test_words_too_short_to_purge_safely_are_refused_in_one_line(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = contents(home)
    code, _, err = run(capsys, "purge", "--text", "My", "--yes")
    assert code == 2 and err.count("\n") == 1 and "too short" in err
    assert contents(home) == before
    with pytest.raises(InvalidInput):
        Needles(["  "])


def _rederivers() -> purge_rows.Rederivers:
    def sync(raw: sqlite3.Connection, space: str, now: datetime) -> None:
        sync_space(SqliteTopicsTransaction(raw), space, now)

    return purge_rows.Rederivers(PURGE_RULES, EVENT_RULES, sync)


async def test_a_purge_killed_after_its_commit_is_finished_at_the_next_open(
    tmp_path: Path,
) -> None:
    db = tmp_path / "m.db"
    async with await StrataGate.open(db) as sg:
        await sg.blocks.append_turn("ns", "s", user="My PIN is 80417263.", assistant="Noted.")
        needles, plan = await sg.purge.words_plan(Needles(["80417263"]))
        assert plan.messages

        def killed(raw: sqlite3.Connection) -> None:  # the commit, without what follows it
            plan = purge_rows.plan_words(raw, needles)
            purge_rows.erase_words(raw, needles, plan, utc_now(), _rederivers())
            raw.execute(
                "INSERT INTO meta(key, value) VALUES (?, ?)", (JOURNAL_KEY, '{"receipt": "act_x"}')
            )

        await sg.db.write(killed)
    journal = "SELECT * FROM meta WHERE key = ?"
    async with await StrataGate.open(db) as sg:
        assert await sg.db.read(lambda raw: raw.execute(journal, (JOURNAL_KEY,)).fetchone()) is None
    assert Needles(["80417263"]).byte_hits(db.read_bytes()) == 0


def test_a_profile_field_is_cleared_with_every_value_it_held(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "m.db"

    async def given() -> None:
        async with await StrataGate.open(db) as sg:
            await sg.profile.update("user_preferred_name", "Zephyrine")
            await sg.profile.update("user_preferred_name", "Zephyrine Quallow")
            await sg.blocks.append_turn(
                "ns", "s", user="Call me Zephyrine.", assistant="Hi Zephyrine."
            )

    async def stored() -> str:
        async with await StrataGate.open(db) as sg:
            profile = await sg.profile.get()
            history = await sg.profile.history()
        return json.dumps([profile.model_dump(mode="json"), *[
            h.model_dump(mode="json") for h in history]])  # fmt: skip

    asyncio.run(given())
    code, out, err = run(
        capsys, "purge", "--profile-field", "user_preferred_name", "--db", str(db), "--yes"
    )
    assert code == 0, err
    assert "Zephyrine" not in out and "profile_fields.value 1" in out
    assert "Zephyrine" not in asyncio.run(stored())
    assert Needles(["Zephyrine"]).byte_hits(db.read_bytes()) == 0
    code, _, err = run(capsys, "purge", "--profile-field", "nope", "--db", str(db), "--yes")
    assert code == 2 and "unknown profile field" in err


async def test_a_job_running_on_the_words_loses_its_claim_and_runs_again(tmp_path: Path) -> None:
    """A worker that read the words before the purge (here a graph projection of the
    event) cannot apply what it made of them."""
    from datetime import timedelta

    from stratagate_plugin.core.records import GRAPH_JOB
    from stratagate_plugin.core.store import jobs

    db = tmp_path / "m.db"
    async with await StrataGate.open(db) as sg:
        await sg.blocks.append_turn("ns", "s", user="My PIN is 80417263.", assistant="Noted.")
        await sg.blocks.seal_tail("ns", "s")
        await sg.derivation.process_pending()
        now = utc_now()

        def graph_job(raw: sqlite3.Connection) -> jobs.Job | None:
            raw.execute(
                "INSERT INTO jobs(id, namespace, kind, target_id, status, attempts, created_at, "
                "updated_at, claims) VALUES ('job_g', 'ns', ?, 'gb_x', 'pending', 0, ?, ?, 0)",
                (GRAPH_JOB, now.isoformat(), now.isoformat()),
            )
            return jobs.claim_next(raw, now, (GRAPH_JOB,), "other-worker", timedelta(60))

        job = await sg.db.write(graph_job)
        # asked in a write, as a job's commit asks (on PostgreSQL it locks the job's row)
        assert job is not None and await sg.db.write(lambda raw: jobs.holds(raw, job))
        await sg.purge.words(Needles(["80417263"]))
        assert not await sg.db.write(lambda raw: jobs.holds(raw, job))
        assert (await sg.db.read(lambda raw: jobs.get_job(raw, job.id))).status == "pending"


def test_an_event_already_purged_has_no_words_left_to_purge(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    event = plate_event(capsys)
    assert run(capsys, "purge", event["id"], "--yes")[0] == 0
    before = contents(home)
    code, out, err = run(capsys, "purge", event["id"], "--yes")
    assert code == 2 and "no words left to purge" in err and out == ""
    assert contents(home) == before


async def test_an_event_whose_other_quote_is_not_the_words_is_edited_not_forgotten(
    tmp_path: Path,
) -> None:
    from stratagate_plugin.core.store import event_rows
    from tests.cards import event_card

    both = event_card(
        "evt_both",
        title="Gate code 4471 and the bins go out Tuesday",
        summary="The user said the gate code is 4471; the bins go out on Tuesday.",
        quotes=["the gate code is 4471", "the bins go out on Tuesday"],
    )
    only = event_card("evt_only", title="Gate code is 4471", quotes=["the gate code is 4471"])
    async with await StrataGate.open(tmp_path / "m.db") as sg:
        await sg.blocks.append_turn("ns", "s", user="Hello there.", assistant="Hi.")  # the space
        await sg.db.write(
            lambda raw: [event_rows.insert_event(raw, c, EVENT_RULES) for c in (both, only)]
        )
        _, plan = await sg.purge.words_plan(Needles(["4471"]))
        assert {i.id: i.outcome for i in plan.events} == {
            "evt_both": "edited",
            "evt_only": "forgotten",
        }
        await sg.purge.words(Needles(["4471"]))
        kept, gone = await sg.events.get("evt_both"), await sg.events.get("evt_only")
    assert kept.status == "active" and "4471" not in kept.summary + kept.title
    assert "bins go out on Tuesday" in kept.summary and kept.quotes[1] == both.quotes[1]
    assert gone.status == "forgotten" and "4471" not in gone.title + gone.summary


def test_copies_a_killed_rewrite_left_are_found_and_removed(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert_left_copies_purged(home, capsys, [home / "sessions" / ".a.jsonl.purging"])


@pytest.mark.sqlite_only(reason="SQLite's own backups; a server's are pg_dump's, the operator's")
def test_backup_copies_a_killed_rewrite_left_are_found_and_removed(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (home / "backups").mkdir(exist_ok=True)
    left = [home / "backups" / "memory.20270101T000000Z.purging"]
    assert_left_copies_purged(home, capsys, left)


def assert_left_copies_purged(
    home: Path, capsys: pytest.CaptureFixture[str], left: list[Path]
) -> None:
    """The copies ``left`` are reported by the check, removed by the purge."""
    for path in left:
        path.write_bytes(b"... SUA12345 ...")
    code, out, _ = run(capsys, "purge", "--check", "--text", "SUA12345")
    assert code == 1 and all(str(path) in out for path in left)
    assert run(capsys, "purge", "--text", "SUA12345", "--yes")[0] == 0
    assert not any(path.exists() for path in left)
    assert run(capsys, "purge", "--check", "--text", "SUA12345")[0] == 0


def graph_rows_holding(home: Path, words: str) -> dict[str, int]:
    """Rows of every graph table whose text holds ``words`` (any case)."""
    with sqlite3.connect(home / "memory.db") as conn:
        tables = [
            name
            for (name,) in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'graph_%'"
            )
        ]
        found = {}
        for table in tables:
            rows = conn.execute(f"SELECT * FROM {table}").fetchall()
            hits = sum(words.lower() in json.dumps(row, ensure_ascii=False).lower() for row in rows)
            if hits:
                found[table] = hits
    return found


def test_a_purged_place_leaves_the_graph_too(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """ "My mother lives in Lyon" projects Lyon as a place node citing its event: a purge of
    the word erases it from every graph table, as from the messages."""
    assert graph_rows_holding(home, "Lyon"), "the graph should hold Lyon before the purge"
    code, _, err = run(capsys, "purge", "--text", "Lyon", "--yes")
    assert code == 0, err
    assert graph_rows_holding(home, "Lyon") == {}
    assert "I hate cilantro in my tacos." in contents(home).values()
