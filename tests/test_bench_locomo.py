"""LoCoMo bench: a shared image's caption joins its line; the plain-BM25 baseline is optional."""

import json
import sys
from pathlib import Path

import pytest

from stratagate_plugin.bench.locomo import BASELINE_SKIPPED, run_locomo, sessions_of

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
