"""Chat exports over the import's 4 MB: known by their first bytes and recorded as
``ingest`` records them (64 MB), by ``stratagate import`` and by the web import page,
read one conversation at a time instead of whole (issue 27)."""

import asyncio
import copy
import io
import json
from pathlib import Path
from typing import Any

import pytest
from webapp import memory_of, post, web_app

from stratagate_plugin.cli.main import main
from stratagate_plugin.core.errors import InvalidInput
from stratagate_plugin.core.importer.chat_file import JsonListStream, read_stream
from stratagate_plugin.core.importer.external_format import MAX_BYTES
from stratagate_plugin.core.importer.formats.chat_exports import CHATGPT, CLAUDE, sniff_kind
from stratagate_plugin.core.memory import StrataGate

SAMPLES = Path(__file__).parent / "samples"
CHATGPT_SAMPLE = SAMPLES / "chatgpt-conversations.json"
CLAUDE_SAMPLE = SAMPLES / "claude-conversations.json"
CONVERSATIONS = 60
PADDING = 72 * 1024  # metadata per conversation, as real exports carry: 60 of them pass 4 MB


def big_chatgpt_export() -> bytes:
    """``CONVERSATIONS`` one-turn conversations in the ChatGPT sample's shape, each with a
    large metadata field on its messages (citations, model details: left out)."""
    template = json.loads(CHATGPT_SAMPLE.read_text(encoding="utf-8"))[1]
    conversations = []
    for number in range(CONVERSATIONS):
        conversation = copy.deepcopy(template)
        conversation["id"] = conversation["conversation_id"] = f"big-{number:03d}"
        conversation["title"] = f"Pottery class {number}"
        for node in conversation["mapping"].values():
            message = node.get("message")
            if message and message["author"]["role"] in ("user", "assistant"):
                said = message["content"]["parts"][0]
                message["content"]["parts"] = [f"{said} (week {number})"]
                message["metadata"] = {"citations": ["x" * (PADDING // 2)]}
        conversations.append(conversation)
    data = json.dumps(conversations, ensure_ascii=False, indent=1).encode("utf-8")
    assert len(data) > MAX_BYTES
    return data


@pytest.fixture(scope="module")
def big_export() -> bytes:
    return big_chatgpt_export()


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def thread_ids(db: Path) -> set[str]:
    async def read() -> set[str]:
        async with await StrataGate.open(db) as memory:
            return {view.block.thread_id for view in await memory.blocks.views("default")}

    return asyncio.run(read())


def test_the_first_bytes_tell_a_chat_export(big_export: bytes) -> None:
    assert sniff_kind(big_export[:4096]) == CHATGPT
    assert sniff_kind(CLAUDE_SAMPLE.read_bytes()[:4096]) == CLAUDE
    for other in ("mem0-get-all.json", "export-v2.json", "mcp-memory.jsonl", "letta-agent.af"):
        assert sniff_kind((SAMPLES / "import" / other).read_bytes()) is None, other
    # the key must belong to the first conversation, and be an object / a list
    assert sniff_kind(b'[{"title": "mapping", "x": {"mapping": {}}, "y": 1}, 2]') is None
    assert sniff_kind(b'[{"mapping": 3, "chat_messages": "no"}]') is None
    assert sniff_kind(b'{"mapping": {}}') is None
    assert sniff_kind(b'[{"title": "cut off before the ma') is None
    assert sniff_kind(b'\xef\xbb\xbf [ {"name": "\\"x\\"", "chat_messages": [') == CLAUDE


def test_import_of_a_chat_export_over_4_mb_records_it_as_ingest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], big_export: bytes
) -> None:
    file = tmp_path / "conversations.json"
    file.write_bytes(big_export)
    db = tmp_path / "m.db"
    code, out, err = run(capsys, "import", str(file), "--db", str(db), "--space", "default")
    assert code == 0, err
    assert "larger than" not in err
    assert f"{file} is a ChatGPT export (a chat history, not memories)" in err
    assert "as `stratagate ingest FILE` does" in err
    assert (
        f"recorded {CONVERSATIONS} turns (0 already present) from {CONVERSATIONS} ChatGPT "
        "conversations into default" in out
    )
    assert thread_ids(db) == {f"chatgpt-big-{n:03d}" for n in range(CONVERSATIONS)}
    code, out, _ = run(capsys, "ingest", str(file), "--db", str(db), "--space", "default")
    assert code == 0 and f"recorded 0 turns ({CONVERSATIONS} already present)" in out


def test_import_of_a_chat_export_says_so_in_json_and_refuses_a_preview(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "m.db"
    base = ("--db", str(db), "--space", "default")
    code, out, err = run(capsys, "import", str(CLAUDE_SAMPLE), "--preview", *base)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert "is a chat history (Claude export) and has no preview" in err
    assert "stratagate ingest FILE" in err
    assert not db.exists() or thread_ids(db) == set()
    code, out, err = run(capsys, "import", str(CLAUDE_SAMPLE), "--json", *base)
    assert code == 0, err
    body = json.loads(out)
    assert body["chat_history"] == {
        "kind": "Claude",
        "conversations": 4,
        "recorded": 5,
        "present": 0,
        "sealed": 3,
        "space": "default",
    }


def test_an_export_is_read_a_conversation_at_a_time(big_export: bytes) -> None:
    stream = io.BytesIO(big_export)
    items = iter(JsonListStream(stream, "conversations.json", 64 * 1024 * 1024))
    first = next(items)
    assert first["conversation_id"] == "big-000"
    assert stream.tell() < len(big_export) // 4  # not read whole to give the first
    assert sum(1 for _ in items) == CONVERSATIONS - 1
    with pytest.raises(InvalidInput, match=r"conversations\.json is larger than 1 MB"):
        list(JsonListStream(io.BytesIO(big_export), "conversations.json", 1024 * 1024))
    read = read_stream(io.BytesIO(big_export), "upload", MAX_BYTES)
    assert read.export is not None and read.export.conversations == CONVERSATIONS
    assert read.data == b""  # the bytes are not kept


def test_a_broken_big_export_names_the_file_and_records_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], big_export: bytes
) -> None:
    file = tmp_path / "conversations.json"
    file.write_bytes(big_export[: len(big_export) // 2])
    db = tmp_path / "m.db"
    for command in ("import", "ingest"):
        code, out, err = run(capsys, command, str(file), "--db", str(db), "--space", "default")
        assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
        assert f"{file} is not valid JSON" in err
    assert not db.exists() or thread_ids(db) == set()


@pytest.mark.parametrize("kind", ["memories", "chat-history"])
async def test_the_web_page_records_a_big_chat_export(
    tmp_path: Path, big_export: bytes, kind: str
) -> None:
    async with web_app(tmp_path) as (_, host, client):
        upload = {"file": ("conversations.json", big_export, "application/json")}
        form = {"kind": kind, "format": "auto"}
        answer = await post(client, "/memory/import?space=default", data=form, files=upload)
        assert answer.status_code == 200, answer.text[:2000]
        assert "larger than" not in answer.text
        assert (
            f"recorded {CONVERSATIONS} turns (0 already present) from {CONVERSATIONS} "
            "ChatGPT conversations into default" in answer.text
        )
        memory = memory_of(host)
        assert await memory.imports.jobs("default") == []  # not taken as memories
        threads = {view.block.thread_id for view in await memory.blocks.views("default")}
        assert len(threads) == CONVERSATIONS


async def test_the_web_page_still_refuses_memories_over_4_mb(tmp_path: Path) -> None:
    big: list[dict[str, Any]] = [{"title": "Big", "summary": "x" * 1000}] * 4500
    data = json.dumps({"version": 2, "candidates": big}).encode()
    assert len(data) > MAX_BYTES
    async with web_app(tmp_path) as (_, _host, client):
        upload = {"file": ("memories.json", data, "application/json")}
        answer = await post(client, "/memory/import", files=upload)
        assert answer.status_code == 413 and "larger than 4 MB" in answer.text


def test_bad_text_in_an_export_is_replaced_and_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Read a conversation at a time, an export still gets ``decode_json``'s rule: invalid
    UTF-8 and lone surrogates become U+FFFD, and the count is said."""
    text = CLAUDE_SAMPLE.read_text(encoding="utf-8")
    text = text.replace("Forty a week is a good base.", "Forty a week\\ud800 is a good base.")
    data = text.encode("utf-8").replace(b"Marathon training", b"Marathon \xff training")
    file = tmp_path / "conversations.json"
    file.write_bytes(data)
    db = tmp_path / "m.db"
    code, _, err = run(capsys, "ingest", str(file), "--db", str(db), "--space", "default")
    assert code == 0, err
    assert f"{file}: 1 bytes of invalid UTF-8 replaced with U+FFFD" in err

    async def read() -> tuple[list[str], dict[str, str]]:
        async with await StrataGate.open(db) as memory:
            blocks = await memory.blocks.views("default")
            said = [m.content for v in blocks for m in await memory.blocks.messages(v.block.id)]
            return said, await memory.blocks.thread_titles("default")

    said, titles = asyncio.run(read())
    assert "Forty a week\ufffd is a good base." in said
    assert "Marathon \ufffd training" in titles.values()
