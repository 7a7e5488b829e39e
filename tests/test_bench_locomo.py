"""LoCoMo bench: a shared image's caption joins its line; the plain-BM25 baseline is optional;
a file of another shape is one line naming what is wrong; a corrected file re-ingests cleanly."""

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from stratagate_plugin.bench.locomo import BASELINE_SKIPPED, run_locomo, sessions_of
from stratagate_plugin.cli.main import main
from stratagate_plugin.core.memory import StrataGate

CONVERSATION = {
    "speaker_a": "Ann",
    "speaker_b": "Bo",
    "session_1_date_time": "1:56 pm on 8 May, 2023",
    "session_1": [
        {"speaker": "Ann", "dia_id": "D1:1", "text": "Look!", "blip_caption": "a photo of a kiln"},
        {"speaker": "Bo", "dia_id": "D1:2", "text": "Nice"},
    ],
}


def test_sessions_of_records_captions_unless_told_not_to() -> None:
    plain = [line.content for line in sessions_of(CONVERSATION, captions=False)[0].lines]
    shown = [line.content for line in sessions_of(CONVERSATION)[0].lines]
    assert plain == ["Ann: Look!", "Bo: Nice"]
    assert shown == ["Ann: Look! [image: a photo of a kiln]", "Bo: Nice"]


async def test_bench_without_rank_bm25_skips_the_baseline_row_and_still_ranks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "rank_bm25", None)  # import now raises ImportError
    sample = {
        "sample_id": "s1",
        "conversation": CONVERSATION,
        "qa": [{"question": "What did Ann show?", "evidence": ["D1:1"], "category": 4}],
    }
    data, out = tmp_path / "locomo.json", tmp_path / "ranked.jsonl"
    data.write_text(json.dumps([sample]), encoding="utf-8")
    result = await run_locomo(data, out)
    assert capsys.readouterr().err.splitlines() == [BASELINE_SKIPPED]
    assert "rank_bm25 baseline" not in result["recall"]
    [row] = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert row["sample_id"] == "s1" and row["ranked_dia_ids"][0] == "D1:1"


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


SAMPLE = {"sample_id": "s1", "conversation": CONVERSATION, "qa": []}


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        (
            [{"thread": "t", "role": "user", "content": "hi", "at": "2025-01-01T00:00:00Z"}],
            "sample 0: sample_id",
        ),
        ({"sample_id": "s1"}, "the top level is not a non-empty list"),
        ([], "the top level is not a non-empty list"),
        ([{**SAMPLE, "conversation": {"session_1": []}}], "sample 0: conversation.speaker_a"),
        (
            [{**SAMPLE, "conversation": {**CONVERSATION, "session_2": [{"speaker": "Ann"}]}}],
            "session_2[0] needs",
        ),
        (
            [{**SAMPLE, "conversation": {**CONVERSATION, "session_2": "hi"}}],
            "session_2 is not a list",
        ),
        ([{k: v for k, v in SAMPLE.items() if k != "qa"}], "sample 0: qa is missing"),
        (
            [{**SAMPLE, "qa": [{"question": "Why?", "category": "x"}]}],
            "qa[0].category is not an integer",
        ),
        (
            [{**SAMPLE, "qa": [{"question": "Why?", "evidence": "D1:1"}]}],
            "qa[0].evidence is not a list",
        ),
        ([{**SAMPLE, "qa": [{"answer": "no question"}]}], "qa[0] needs a string question"),
    ],
)
def test_bench_on_a_file_of_another_shape_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], value: Any, problem: str
) -> None:
    data = tmp_path / "other.json"
    data.write_text(json.dumps(value), encoding="utf-8")
    code, _out, err = run_cli(
        capsys, "bench", "locomo", "--data", str(data), "--out", str(tmp_path / "o")
    )
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith(f"stratagate: error: {data}: not a LoCoMo export: ")
    assert problem in err and "expected a JSON list of samples" in err


@pytest.mark.parametrize(
    ("body", "problem"),
    [(b"", "is empty"), (b"{nope", "is not valid JSON"), (b"[" * 100_000, "nested deeper than")],
)
def test_bench_on_an_unreadable_file_names_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], body: bytes, problem: str
) -> None:
    data = tmp_path / "broken.json"
    data.write_bytes(body)
    code, _out, err = run_cli(
        capsys, "bench", "locomo", "--data", str(data), "--out", str(tmp_path / "o")
    )
    assert code == 2 and err.count("\n") == 1
    assert err.startswith(f"stratagate: error: {data} ") and problem in err


def test_ingest_of_a_corrected_locomo_file_records_only_the_fixed_turn(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = [
        {"speaker": "Ann" if i % 2 == 0 else "Bo", "dia_id": f"D2:{i + 1}", "text": f"line {i}"}
        for i in range(8)
    ]
    conversation = {
        **CONVERSATION,
        "session_2": lines,
        "session_2_date_time": "1:56 pm on 9 May, 2023",
    }
    data, db = tmp_path / "locomo.json", str(tmp_path / "m.db")
    data.write_text(json.dumps([{**SAMPLE, "conversation": conversation}]), encoding="utf-8")
    code, out, _ = run_cli(capsys, "ingest", str(data), "--db", db, "--space", "s1")
    assert code == 0 and "recorded 5 LoCoMo turns from 1 conversations into s1" in out
    lines[4]["text"] = "line 4, corrected"
    data.write_text(json.dumps([{**SAMPLE, "conversation": conversation}]), encoding="utf-8")
    code, out, _ = run_cli(capsys, "ingest", str(data), "--db", db, "--space", "s1")
    assert code == 0 and "recorded 1 LoCoMo turns from 1 conversations into s1" in out
    texts = asyncio.run(space_texts(Path(db), "s1"))
    assert len(texts) == 12 and len(set(texts)) == 11 and "Ann: line 4, corrected" in texts


async def space_texts(db: Path, space: str) -> list[str]:
    async with await StrataGate.open(db) as memory:
        blocks = await memory.blocks.views(space)
        return [m.content for view in blocks for m in await memory.blocks.messages(view.block.id)]


def test_ingest_of_a_malformed_locomo_file_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "locomo.json"
    data.write_text(
        json.dumps([{"conversation": {"session_1": [{"speaker": "Ann"}]}}]), encoding="utf-8"
    )
    code, _out, err = run_cli(capsys, "ingest", str(data), "--db", str(tmp_path / "m.db"))
    assert code == 2 and err.count("\n") == 1
    assert err.startswith(
        f"stratagate: error: {data}: not a LoCoMo export: sample 0: conversation."
    )


def test_bench_on_a_directory_says_it_cannot_read_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _out, err = run_cli(capsys, "bench", "locomo", "--data", str(tmp_path), "--out", "o")
    assert code == 2 and err == f"stratagate: error: cannot read {tmp_path}: Is a directory\n"


def test_bench_ends_with_a_progress_line_counting_questions(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    questions = [{"question": q, "evidence": ["D1:1"]} for q in ("What?", "Who?", "Where?")]
    data = tmp_path / "locomo.json"
    data.write_text(json.dumps([{**SAMPLE, "qa": questions}]), encoding="utf-8")
    argv = ("bench", "locomo", "--data", str(data), "--out", str(tmp_path / "ranked.jsonl"))
    code, out, err = run_cli(capsys, *argv)
    assert code == 0 and err.splitlines()[-1].startswith("bench locomo: 3/3 questions (100%), ")
    assert "%)" not in out  # progress never on stdout
