"""LoCoMo evidence recall for the raw retrieval channel, beside a plain BM25 baseline.

Retrieval sees only the conversation turns, the speakers, the session dates and each
question's text; answers, evidence and generated annotations are read only by the
evaluation step, so the ranking command also runs on a file stripped of them.

A shared image's caption (``blip_caption``, the dataset's only rendering of the image) joins
its line as ``[image: caption]``, the way the reference host records an image part that
carries a description, and the way LoCoMo's own retrieval code renders a turn ("… and
shared <caption>"). ``captions=False`` (``--no-captions``) ranks the text alone.
"""

import itertools
import json
import os
import re
import sys
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from ..core.blocks.transcript import image_marker
from ..core.config import MemoryConfig
from ..core.errors import InvalidInput
from ..core.importer.json_document import read_json_file
from ..core.llm.offline.model import OfflineModel
from ..core.llm.select import model_from_settings
from ..core.memory import StrataGate
from ..core.records import MessageIn, Role
from ..core.store.units import is_database_url
from .locomo_shape import SESSION_KEY, check_samples

BLOCK_TURN_SIZE = 6
CUTOFFS = (1, 5, 10, 20)
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
_ZH_DATE = re.compile(
    r"(\d{4})年(\d{1,2})月(\d{1,2})日\s*(上午|中午|下午|晚上|凌晨)?\s*(\d{1,2}):(\d{2})"
)
_EVIDENCE = re.compile(r"D:?(\d+):(\d+)")
_PLAIN = re.compile(r"[\u4e00-\u9fff]|(?:(?![\u4e00-\u9fff])\w)+")
Ranker = Callable[[str, int], list[str]]
ProgressHook = Callable[[int, int], None]  # (questions ranked, questions in the file)
BASELINE_SKIPPED = (
    "rank_bm25 not installed: the plain-BM25 baseline row is skipped (pip install rank_bm25)"
)


@dataclass(frozen=True)
class Line:
    dia_id: str
    role: Role
    content: str


@dataclass(frozen=True)
class Session:
    thread_id: str
    at: datetime | None
    lines: list[Line]


def parse_session_date(text: str) -> datetime | None:
    """``1:56 pm on 8 May, 2023`` or ``2023年5月8日下午1:56``; None when unreadable."""
    try:
        return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y")
    except ValueError:
        pass
    found = _ZH_DATE.search(text)
    if found is None:
        return None
    year, month, day, part, hour, minute = found.groups()
    clock = int(hour) % 12 + (12 if part in ("下午", "晚上") else 0)
    if part == "中午" and int(hour) < 11:
        clock = int(hour) + 12
    return datetime(int(year), int(month), int(day), clock, int(minute))


def sessions_of(conversation: dict[str, Any], captions: bool = True) -> list[Session]:
    """Sessions in order; the first speaker's lines are ``user``, the other's ``assistant``."""
    numbers = sorted(
        int(key.split("_")[1])
        for key, value in conversation.items()
        if SESSION_KEY.fullmatch(key) and value
    )
    first = conversation["speaker_a"]
    return [
        Session(
            thread_id=f"session_{n}",
            at=parse_session_date(str(conversation.get(f"session_{n}_date_time", ""))),
            lines=[_line(item, first, captions) for item in conversation[f"session_{n}"]],
        )
        for n in numbers
    ]


def _line(item: dict[str, Any], first_speaker: str, captions: bool) -> Line:
    role: Role = "user" if item["speaker"] == first_speaker else "assistant"
    text = f"{item['speaker']}: {item['text']}"
    if captions and item.get("blip_caption"):
        text += " " + image_marker(str(item["blip_caption"]))
    return Line(normal_dia_id(item["dia_id"]), role, text)


def normal_dia_id(text: str) -> str:
    found = _EVIDENCE.search(text)
    return f"D{int(found[1])}:{int(found[2])}" if found else text.strip()


def evidence_ids(qa: dict[str, Any]) -> list[str]:
    """Evidence repaired: ``D8:6; D9:17`` split, ``D:11:26`` and ``D30:05`` normalised."""
    found = [
        f"D{int(a)}:{int(b)}"
        for item in qa.get("evidence") or []
        for a, b in _EVIDENCE.findall(str(item))
    ]
    return list(dict.fromkeys(found))


def turns_of(lines: Sequence[Line]) -> list[list[Line]]:
    """A turn starts at each user line; leading assistant lines join the first turn."""
    turns: list[list[Line]] = []
    for line in lines:
        if line.role == "user" or not turns:
            turns.append([])
        turns[-1].append(line)
    if turns and not any(line.role == "user" for line in turns[0]):
        first, *rest = turns
        turns = [first + rest[0], *rest[1:]] if rest else [first]
    return turns


async def ingest(sg: StrataGate, space: str, sessions: Sequence[Session]) -> dict[str, str]:
    """Record every session as one thread, each sealed at its end; message id → dia_id."""
    dia_of: dict[str, str] = {}
    for session in sessions:
        for turn in turns_of(session.lines):
            if not any(x.role == "user" for x in turn):
                continue
            messages = [MessageIn(role=x.role, content=x.content, at=session.at) for x in turn]
            receipt = await sg.blocks.record_turn(space, session.thread_id, messages, at=session.at)
            dia_of.update(zip(receipt.message_ids, (x.dia_id for x in turn), strict=True))
        await sg.blocks.seal_tail(space, session.thread_id)
    return dia_of


def load_okapi() -> Any | None:
    """rank_bm25's ``BM25Okapi`` (a dev extra); None, said once on stderr, when absent."""
    try:
        from rank_bm25 import BM25Okapi  # type: ignore[import-untyped]
    except ImportError:
        print(BASELINE_SKIPPED, file=sys.stderr)
        return None
    return BM25Okapi


def baseline_ranker(sessions: Sequence[Session], bm25_okapi: Any) -> Ranker:
    """Okapi BM25 over every message: lower-cased words, Han text character by character."""
    lines = [line for session in sessions for line in session.lines]
    model = bm25_okapi([_plain_tokens(line.content) or [""] for line in lines])

    def rank(question: str, k: int) -> list[str]:
        scores = model.get_scores(_plain_tokens(question))
        order = sorted(range(len(lines)), key=lambda i: (-scores[i], i))
        return [lines[i].dia_id for i in order[:k] if scores[i] > 0]

    return rank


def _plain_tokens(text: str) -> list[str]:
    """Lower-cased word runs; each Han character on its own (so Chinese gets a baseline too)."""
    return _PLAIN.findall(text.lower())


async def rank_sample(
    sg: StrataGate,
    sample: dict[str, Any],
    k: int,
    captions: bool = True,
    bm25_okapi: Any | None = None,
    on_question: Callable[[], None] | None = None,
) -> dict[str, list[list[str]]]:
    """Top-k dia_ids per question for retrieve(), each channel and the baselines;
    ``on_question`` is called after each question is ranked."""
    space = str(sample["sample_id"])
    sessions = sessions_of(sample["conversation"], captions)
    dia_of = await ingest(sg, space, sessions)
    await sg.derivation.process_pending()
    baseline = baseline_ranker(sessions, bm25_okapi) if bm25_okapi else None
    ranked: dict[str, list[list[str]]] = {}

    def add(method: str, ids: Sequence[str]) -> None:
        ranked.setdefault(method, []).append([dia_of[i] for i in ids if i in dia_of][:k])

    for qa in sample["qa"]:
        question = str(qa["question"])
        fused = await sg.retrieval.retrieve(space, question, k)
        add("retrieve (fused)", [hit.message_id for hit in fused])
        channels = await sg.retrieval.channel_rankings(space, question, k)
        for name, ids in channels.items():
            add(f"channel: {name}", ids)
        hits = await sg.retrieval.search_raw(space, question, k)
        add("spec search_raw", [hit.message.id for hit in hits])
        if baseline:
            ranked.setdefault("rank_bm25 baseline", []).append(baseline(question, k))
        if on_question is not None:
            on_question()
    return ranked


def recall_rows(
    samples: Sequence[dict[str, Any]], ranked: dict[str, list[list[list[str]]]]
) -> dict[str, dict[str, dict[str, float]]]:
    """Per method and category: question count, recall@n and all-evidence@10."""
    table: dict[str, dict[str, dict[str, float]]] = {}
    for method, per_sample in ranked.items():
        buckets: dict[str, list[dict[str, float]]] = {}
        for sample, lists in zip(samples, per_sample, strict=True):
            for qa, top in zip(sample["qa"], lists, strict=True):
                scores = question_scores(evidence_ids(qa), top)
                if scores is None:
                    continue
                label = CATEGORIES.get(int(qa.get("category", 0)), "other")
                buckets.setdefault(label, []).append(scores)
                if label != "adversarial":
                    buckets.setdefault("all (1-4)", []).append(scores)
        table[method] = {label: _mean(rows) for label, rows in sorted(buckets.items())}
    return table


def question_scores(evidence: Sequence[str], top: Sequence[str]) -> dict[str, float] | None:
    if not evidence:
        return None
    wanted = set(evidence)
    scores = {f"r@{n}": len(wanted.intersection(top[:n])) / len(wanted) for n in CUTOFFS}
    scores["all@10"] = float(wanted.issubset(top[:10]))
    return scores


def _mean(rows: Sequence[dict[str, float]]) -> dict[str, float]:
    keys = rows[0].keys()
    summary = {key: round(sum(row[key] for row in rows) / len(rows), 4) for key in keys}
    return {"n": float(len(rows)), **summary}


def format_table(table: dict[str, dict[str, dict[str, float]]]) -> str:
    header = ["method", "category", "n", *(f"r@{n}" for n in CUTOFFS), "all@10"]
    lines = [" | ".join(header)]
    for method, rows in table.items():
        for label, row in rows.items():
            cells = [f"{row[key]:.3f}" for key in header[3:]]
            lines.append(" | ".join([method, label, str(int(row["n"])), *cells]))
    return "\n".join(lines)


def _write_ranked(
    out: Path, samples: Iterable[dict[str, Any]], lists: list[list[list[str]]]
) -> None:
    with out.open("w", encoding="utf-8") as handle:
        for sample, per_question in zip(samples, lists, strict=True):
            for index, (qa, top) in enumerate(zip(sample["qa"], per_question, strict=True)):
                row = {
                    "sample_id": sample["sample_id"],
                    "qa_index": index,
                    "category": qa.get("category"),
                    "ranked_dia_ids": top,
                }
                handle.write(json.dumps(row, ensure_ascii=False) + "\n")


def load_samples(path: Path) -> list[dict[str, Any]]:
    """The samples of a LoCoMo file; invalid text replaced (said on stderr), shape checked."""
    document = read_json_file(path)
    for note in document.notes:
        print(f"stratagate: warning: {note}", file=sys.stderr)
    try:
        return check_samples(document.value)
    except InvalidInput as error:
        raise InvalidInput(f"{path}: {error}") from None


def where_to_keep(db_path: Path | str) -> Path | str:
    """``--db``: a file, or a ``postgresql://`` URL kept as text (``Path`` folds its ``//``)."""
    return db_path if is_database_url(db_path) else Path(db_path)


async def run_locomo(
    data_path: Path | str,
    out_path: Path | str,
    k: int = 20,
    db_path: Path | str | None = None,
    model_kind: str = "offline",
    captions: bool = True,
    progress: ProgressHook | None = None,
) -> dict[str, Any]:
    """Ingest, derive, rank every question, write the JSONL, print and return the table;
    ``progress`` hears (questions ranked, questions in the file) as the run goes."""
    samples = load_samples(Path(data_path))
    total, counted = sum(len(sample["qa"]) for sample in samples), itertools.count(1)

    def ranked_one() -> None:
        if progress is not None:
            progress(next(counted), total)

    if progress is not None:
        progress(0, total)

    model = OfflineModel() if model_kind == "offline" else model_from_settings(environ=os.environ)
    bm25_okapi = load_okapi()
    with tempfile.TemporaryDirectory() as scratch:
        path = where_to_keep(db_path) if db_path else Path(scratch) / "locomo.db"
        config = MemoryConfig(block_turn_size=BLOCK_TURN_SIZE)
        async with await StrataGate.open(path, config, model) as sg:
            per_sample = [
                await rank_sample(sg, sample, k, captions, bm25_okapi, ranked_one)
                for sample in samples
            ]
    ranked = {method: [lists[method] for lists in per_sample] for method in per_sample[0]}
    _write_ranked(Path(out_path), samples, ranked["retrieve (fused)"])
    table = recall_rows(samples, ranked)
    if any(table.values()):
        print(format_table(table))
    else:
        print(f"wrote {out_path}; the file carries no evidence, so no recall is computed")
    return {"data": str(data_path), "k": k, "model": model.name, "recall": table}
