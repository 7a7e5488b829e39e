"""ChatGPT's and Claude's ``conversations.json``: ``stratagate ingest`` records each
conversation as a sealed thread with its own times, only the branch that leads to
``current_node``, without system, tool, hidden or non-text messages; a re-run adds
nothing; ``import`` records it as ``ingest`` does; the web import page takes a chat history
too."""

import asyncio
import json
import shutil
from pathlib import Path

import pytest
from webapp import memory_of, post, web_app

from stratagate_plugin.cli.main import main
from stratagate_plugin.core.errors import InvalidInput
from stratagate_plugin.core.importer.formats import chat_exports
from stratagate_plugin.core.memory import StrataGate
from stratagate_plugin.core.records import Message

SAMPLES = Path(__file__).parent / "samples"
CHATGPT = SAMPLES / "chatgpt-conversations.json"
CLAUDE = SAMPLES / "claude-conversations.json"
GPT_EN = "chatgpt-6a1f-en-moving"
GPT_ZH = "chatgpt-7b2e-zh-cooking"
CLAUDE_EN = "claude-c1a7e0d2-0000-4000-8000-000000000001"
CLAUDE_ZH = "claude-c1a7e0d2-0000-4000-8000-000000000002"
CLAUDE_BRANCHED = "claude-c1a7e0d2-0000-4000-8000-000000000004"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def ingest(capsys: pytest.CaptureFixture[str], sample: Path, db: Path) -> tuple[str, str]:
    code, out, err = run(capsys, "ingest", str(sample), "--db", str(db), "--space", "default")
    assert code == 0, err
    return out, err


def ingest_both(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> Path:
    """Both samples ingested into one new database; the database."""
    db = tmp_path / "m.db"
    for sample in (CHATGPT, CLAUDE):
        ingest(capsys, sample, db)
    return db


def threads(db: Path) -> dict[str, list[Message]]:
    """Every sealed block's messages by thread, in order, and whatever is still open."""
    return asyncio.run(_threads(db))


async def _threads(db: Path) -> dict[str, list[Message]]:
    async with await StrataGate.open(db) as memory:
        found: dict[str, list[Message]] = {}
        for view in await memory.blocks.views("default"):
            messages = await memory.blocks.messages(view.block.id)
            found.setdefault(view.block.thread_id, []).extend(messages)
        for thread in found:
            assert await memory.blocks.open_tail("default", thread) == []  # every thread sealed
        return found


def said(messages: list[Message]) -> list[tuple[str, str]]:
    return [(m.role, m.content) for m in messages]


def test_chatgpt_export_records_the_current_branch_of_each_conversation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "m.db"
    out, err = ingest(capsys, CHATGPT, db)
    assert "recorded 3 turns (0 already present) from 2 ChatGPT conversations" in out
    assert "sealed 2 blocks" in out
    assert "ingest: 3/3 turns" in err  # progress on stderr, as any ingest
    found = threads(db)
    assert sorted(found) == sorted([GPT_EN, GPT_ZH])
    assert said(found[GPT_EN]) == [
        ("user", "I just adopted a greyhound called Pixel."),
        ("assistant", "Congratulations on adopting Pixel!"),
        ("user", "I live in Hamburg, where can Pixel run off-leash?"),  # the edit, not Berlin
        ("assistant", "The Stadtpark has an off-leash zone for Pixel."),
    ]
    words = " ".join(m.content for m in found[GPT_EN])
    for left_out in ("Berlin", "You are ChatGPT", "I like trains", "search(", "prompt", "Result:"):
        assert left_out not in words  # old branch, system, hidden, code, to a tool, tool
    assert [m.created_at.isoformat() for m in found[GPT_EN]] == [
        "2024-06-01T10:01:00+00:00",
        "2024-06-01T10:01:05+00:00",
        "2024-06-01T10:06:40+00:00",
        "2024-06-01T10:07:00+00:00",
    ]
    assert said(found[GPT_ZH]) == [
        ("user", "我最近在学做红烧肉，我妈妈是上海人。"),
        ("assistant", "上海红烧肉要用冰糖上色。"),
    ]
    assert found[GPT_ZH][0].created_at.isoformat() == "2024-07-01T08:01:00+00:00"


def test_claude_export_takes_text_and_content_forms_with_their_times(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "m.db"
    out, err = ingest(capsys, CLAUDE, db)
    assert "recorded 5 turns (0 already present) from 4 Claude conversations" in out
    assert "1 Claude conversations hold no user message and were left out" in err
    found = threads(db)
    assert sorted(found) == sorted([CLAUDE_EN, CLAUDE_ZH, CLAUDE_BRANCHED])
    assert said(found[CLAUDE_EN]) == [
        ("user", "I'm training for the Hamburg marathon in April."),  # text, empty content
        ("assistant", "Great goal. How many kilometres do you run a week?"),  # content only
        ("user", "About forty, mostly with my dog Pixel."),  # both: not doubled
        ("assistant", "Forty a week is a good base."),  # text, no content
    ]
    words = " ".join(m.content for m in found[CLAUDE_EN])
    assert "The user runs" not in words and "marathon plan" not in words  # thinking, tool
    times = [m.created_at.isoformat() for m in found[CLAUDE_EN]]
    assert times == [
        "2024-06-03T08:01:00+00:00",
        "2024-06-03T08:01:10+00:00",
        "2024-06-03T08:05:00+00:00",  # given as 10:05+02:00
        "2024-06-03T08:05:20+00:00",
    ]
    assert said(found[CLAUDE_ZH])[0] == ("user", "我周末要去杭州看外婆。")


def test_rerunning_an_export_records_nothing_new(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = ingest_both(capsys, tmp_path)
    before = threads(db)
    for sample, kind, turns in ((CHATGPT, "ChatGPT", 3), (CLAUDE, "Claude", 5)):
        out, _ = ingest(capsys, sample, db)
        assert f"recorded 0 turns ({turns} already present) from" in out and kind in out
    assert threads(db) == before


def test_a_conversation_tree_without_current_node_follows_the_last_children(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = CHATGPT.read_text(encoding="utf-8").replace('"current_node": "a3",', "")
    file = tmp_path / "conversations.json"
    file.write_text(text, encoding="utf-8")
    ingest(capsys, file, tmp_path / "m.db")
    contents = [m.content for m in threads(tmp_path / "m.db")[GPT_EN]]
    assert "I live in Hamburg, where can Pixel run off-leash?" in contents
    assert "I live in Berlin." not in contents


@pytest.mark.parametrize(
    ("sample", "kind", "turns"), [(CHATGPT, "ChatGPT", 3), (CLAUDE, "Claude", 5)]
)
def test_import_of_a_chat_history_records_it_as_ingest_does(
    sample: Path, kind: str, turns: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "m.db"
    code, out, err = run(capsys, "import", str(sample), "--db", str(db), "--space", "default")
    assert code == 0, err
    assert f"is a {kind} export (a chat history, not memories)" in err
    assert "as `stratagate ingest FILE` does" in err and "candidates list" not in err
    assert f"recorded {turns} turns (0 already present) from" in out and kind in out
    again, _ = ingest(capsys, sample, db)
    assert f"recorded 0 turns ({turns} already present)" in again


def test_a_claude_conversation_keeps_the_branch_that_leads_to_its_last_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Newer Claude exports link each message to its parent: an edited question and a
    regenerated answer start sibling branches, and only the latest one was said last."""
    db = tmp_path / "m.db"
    ingest(capsys, CLAUDE, db)
    assert said(threads(db)[CLAUDE_BRANCHED]) == [
        ("user", "I'm growing tomatoes on my balcony in Leipzig."),
        ("assistant", "Tomatoes like a sunny balcony. How much sun does it get?"),
        ("user", "It gets about six hours of sun in the afternoon."),  # the edit
        ("assistant", "Six hours of afternoon sun suits cherry tomatoes well."),  # regenerated
    ]


def test_a_claude_branch_is_found_whatever_the_listed_order() -> None:
    def message(uuid: str, parent: str, sender: str, at: str) -> dict[str, object]:
        return {"uuid": uuid, "parent_message_uuid": parent, "sender": sender,
                "text": f"words {uuid}", "created_at": f"2025-03-0{at}T10:00:00Z"}  # fmt: skip

    root = "00000000-0000-4000-8000-000000000000"
    listed = [
        message("b2", "a1", "human", "4"),  # the newer edit, listed first
        message("b3", "b2", "assistant", "5"),
        message("a1", root, "human", "1"),
        message("a2", "a1", "assistant", "2"),
        message("x", "gone", "assistant", "3"),  # a parent not in the export: its own root
    ]
    messages, _ = chat_exports.to_messages([{"uuid": "u", "chat_messages": listed}])
    assert [m["content"] for m in messages] == ["words a1", "words b2", "words b3"]
    plain = [{k: v for k, v in m.items() if k != "parent_message_uuid"} for m in listed]
    older, _ = chat_exports.to_messages([{"uuid": "u", "chat_messages": plain}])
    assert len(older) == 5  # no links (older exports): every message, as listed


def test_conversation_titles_are_kept_and_listed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = ingest_both(capsys, tmp_path)

    async def titles() -> dict[str, str]:
        async with await StrataGate.open(db) as memory:
            return await memory.blocks.thread_titles("default")

    assert asyncio.run(titles()) == {
        GPT_EN: "Moving and running",
        GPT_ZH: "学做饭",
        CLAUDE_EN: "Marathon training",
        CLAUDE_ZH: "周末",
        CLAUDE_BRANCHED: "Balcony tomatoes",
    }  # the empty conversation is not a thread, so it has no title
    code, out, err = run(capsys, "blocks", "--db", str(db), "--space", "default")
    assert code == 0, err
    assert f"{GPT_EN}  Moving and running" in out and f"{CLAUDE_ZH}  周末" in out
    code, out, _ = run(capsys, "blocks", "--db", str(db), "--space", "default", "--json")
    rows = {row["thread"]: row["thread_title"] for row in json.loads(out)}
    assert rows[CLAUDE_BRANCHED] == "Balcony tomatoes"


def test_a_purge_erases_the_words_from_a_conversation_title(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "m.db"
    ingest(capsys, CLAUDE, db)
    code, _, err = run(capsys, "purge", "--text", "Balcony tomatoes", "--yes", "--db", str(db))
    assert code == 0, err
    code, out, err = run(capsys, "purge", "--text", "Balcony tomatoes", "--check", "--db", str(db))
    assert code == 0, (out, err)

    async def title() -> str:
        async with await StrataGate.open(db) as memory:
            return (await memory.blocks.thread_titles("default")).get(CLAUDE_BRANCHED, "")

    assert "Balcony tomatoes" not in asyncio.run(title())


async def test_the_web_lists_imported_conversations_by_title(tmp_path: Path) -> None:
    async with web_app(tmp_path) as (_, _host, client):
        upload = {"file": ("conversations.json", CLAUDE.read_bytes(), "application/json")}
        form = {"kind": "chat-history", "format": "auto"}
        answer = await post(client, "/memory/import?space=default", data=form, files=upload)
        assert answer.status_code == 200, answer.text
        page = await client.get(f"/memory/blocks?space=default&thread={CLAUDE_BRANCHED}")
        assert page.status_code == 200
        assert f'value="{CLAUDE_BRANCHED}" selected>Balcony tomatoes · ' in page.text
        assert ">Marathon training · " in page.text
        assert "<h1>" in page.text and "Balcony tomatoes" in page.text.split("<h1>")[1][:300]


def test_ingest_of_a_broken_export_names_the_conversation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = tmp_path / "conversations.json"
    shutil.copy(CLAUDE, file)
    file.write_text(file.read_text(encoding="utf-8")[:-2] + ", 7]", encoding="utf-8")
    code, out, err = run(capsys, "ingest", str(file), "--db", str(tmp_path / "m.db"))
    assert code == 2 and out == ""
    assert "conversation 4: must be a JSON object; nothing was recorded" in err


async def test_web_import_page_takes_a_chat_history(tmp_path: Path) -> None:
    async with web_app(tmp_path) as (_, host, client):
        page = await client.get("/memory/import")
        assert 'name="kind" value="chat-history"' in page.text
        chinese = await client.get("/memory/import?lang=zh")
        assert "聊天记录（ChatGPT 或 Claude 的 conversations.json）" in chinese.text
        upload = {"file": ("conversations.json", CHATGPT.read_bytes(), "application/json")}
        form = {"kind": "chat-history", "format": "auto"}
        answer = await post(client, "/memory/import?space=default", data=form, files=upload)
        assert answer.status_code == 200, answer.text
        assert "recorded 3 turns (0 already present) from 2 ChatGPT conversations" in answer.text
        memory = memory_of(host)
        blocks = await memory.blocks.views("default")
        assert sorted({view.block.thread_id for view in blocks}) == sorted([GPT_EN, GPT_ZH])
        again = await post(client, "/memory/import?space=default", data=form, files=upload)
        assert "recorded 0 turns (3 already present)" in again.text
        assert len(await memory.blocks.views("default")) == len(blocks)
        as_memories = await post(
            client, "/memory/import?space=default", data={"format": "auto"}, files=upload
        )
        assert as_memories.status_code == 200  # known by its shape: recorded, and said so
        assert "is a ChatGPT export, a chat history rather than memories" in as_memories.text
        assert "recorded 0 turns (3 already present)" in as_memories.text
        assert await memory.imports.jobs("default") == []


def test_odd_shapes_in_an_export_never_raise_past_a_clear_line() -> None:
    """A cycle in the tree, ids and roles of the wrong type, unreadable times: what can
    be read is read, the rest is left out or refused as ``InvalidInput``."""
    cyclic = {
        "id": ["not", "an", "id"],
        "current_node": "b",
        "create_time": 1e300,
        "mapping": {
            "a": {
                "parent": "b",
                "message": {
                    "author": {"role": "user"},
                    "create_time": 1.0,
                    "content": {"content_type": "text", "parts": ["hi", {"x": 1}, 7]},
                },
            },
            "b": {"parent": "a", "message": {"author": {"role": ["user"]}}},
        },
    }
    messages, skipped = chat_exports.to_messages([cyclic])
    assert skipped == 0 and messages == [
        {"thread": "chatgpt-0", "role": "user", "content": "hi", "at": "1970-01-01T00:00:01+00:00"}
    ]
    odd_claude = {"uuid": 5, "chat_messages": [{"sender": {}, "text": "x"}, "y"]}
    assert chat_exports.to_messages([odd_claude]) == ([], 1)
    with pytest.raises(InvalidInput, match="conversation 1: must be a JSON object"):
        chat_exports.to_messages([odd_claude, "z"])
