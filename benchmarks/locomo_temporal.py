"""LoCoMo temporal questions through the full pipeline: façade → sealed blocks → derivation.

    .venv/bin/python benchmarks/locomo_temporal.py \
        --data ../shared/locomo/locomo-dev.json --out /tmp/locomo-temporal.json

Each sample is recorded into a fresh temporary database (namespace = ``sample_id``) with
``stratagate_plugin.bench.locomo.ingest``: every session is one thread, the first speaker is
the user and the second the assistant, content ``"<speaker>: <text>"`` and message time =
the session time. Blocks hold 6 turns (``MemoryConfig(block_turn_size=6)``); before the last
turn of a session the namespace's block size is lowered to the size of that partial block, so
recording the turn seals it and no message stays in an unsealed tail (the report counts any
that do). Sealing only ever depends on turn counts, never on the questions. Then
``process_pending`` runs the offline model (summary job, then extraction job per block).

Only after ingest and derivation are the questions read. For category-2 questions whose gold
answer parses to a date, week, weekend, month, season or year, a hit is a stored event citing
an evidence message whose happened interval matches the gold (``interval_matches``). The naive
baseline dates each evidence message at its own message day, scored the same way.
"""

import argparse
import asyncio
import json
import re
import tempfile
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

from stratagate_plugin.bench.locomo import evidence_ids, ingest, sessions_of
from stratagate_plugin.core.config import MemoryConfig
from stratagate_plugin.core.events.cards import EventCard
from stratagate_plugin.core.memory import StrataGate
from stratagate_plugin.core.text.temporal.patterns import EN_MONTHS, WEEKDAYS

BLOCK_TURN_SIZE = 6
_EN_DATE = re.compile(
    r"(?:(?P<d1>\d{1,2})\s+(?P<m1>[a-z]+)|(?P<m2>[a-z]+)\s+(?P<d2>\d{1,2}))[,\s]+(?P<y>\d{4})"
)
_EN_MONTH = re.compile(r"(?P<m>[a-z]+)[,.\s]+(?P<y>\d{4})")
_EN_DAY_NO_YEAR = re.compile(r"^(?P<d>\d{1,2})\s+(?P<m>[a-z]+)$")
_ZH_DATE = re.compile(r"(?:(?P<y>\d{4})年)?(?P<m>\d{1,2})月(?:(?P<d>\d{1,2})日)?")
_ZH_WEEKDAY = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6}
_SEASONS = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12}
_COUNTS = {"two": 2, "three": 3, "four": 4, "2": 2, "3": 3, "两": 2, "二": 2, "三": 3}


# --- gold answers -----------------------------------------------------------------------


@dataclass(frozen=True)
class GoldInterval:
    """A gold answer as an inclusive day interval and its kind (day, week, month …)."""

    first: date
    last: date
    kind: str


def parse_gold_answer(answer: str, reference: date | None = None) -> GoldInterval | None:
    """A gold answer as an interval, or None when it is a duration, a name or vague."""
    text = " ".join(answer.replace("`", "").replace("，", ",").lower().split())
    if not text or re.search(r"\bsince\b|自|ago|前$|\byears?$|\bweeks?$", text):
        return None
    anchor = _gold_anchor(text, reference)
    if anchor is None:
        return None
    relative = _gold_relative(text, anchor)
    if relative is not None:
        return relative
    vague_day = anchor.kind == "day" and re.search(r"before|前|week|周|weekend", text)
    return None if vague_day else anchor


def _gold_anchor(text: str, reference: date | None) -> GoldInterval | None:
    zh = _ZH_DATE.search(text)
    if zh and (zh["y"] or reference):
        year = int(zh["y"]) if zh["y"] else reference.year if reference else 0
        return _day_or_month(year, int(zh["m"]), int(zh["d"]) if zh["d"] else None)
    english = _EN_DATE.search(text)
    if english:
        month = EN_MONTHS.get(english["m1"] or english["m2"] or "")
        day = int(english["d1"] or english["d2"])
        return _day_or_month(int(english["y"]), month, day) if month else None
    return _gold_coarse(text, reference)


def _gold_coarse(text: str, reference: date | None) -> GoldInterval | None:
    month_year = _EN_MONTH.search(text)
    if month_year and month_year["m"] in EN_MONTHS:
        return _day_or_month(int(month_year["y"]), EN_MONTHS[month_year["m"]], None)
    no_year = _EN_DAY_NO_YEAR.match(text)
    if no_year and reference and no_year["m"] in EN_MONTHS:
        return _day_or_month(reference.year, EN_MONTHS[no_year["m"]], int(no_year["d"]))
    season = re.search(r"(spring|summer|autumn|fall|winter) of (\d{4})", text)
    if season:
        first = date(int(season[2]), _SEASONS[season[1]], 1)
        return GoldInterval(first, _month_end(first, 2), "season")
    year = re.fullmatch(r"(?:in |around )?(\d{4})年?", text)
    if year is None:
        return None
    return GoldInterval(date(int(year[1]), 1, 1), date(int(year[1]), 12, 31), "year")


def _day_or_month(year: int, month: int, day: int | None) -> GoldInterval:
    if day is None:
        first = date(year, month, 1)
        return GoldInterval(first, _month_end(first, 0), "month")
    return GoldInterval(date(year, month, day), date(year, month, day), "day")


def _month_end(first: date, extra_months: int) -> date:
    index = first.year * 12 + first.month - 1 + extra_months + 1
    return date(index // 12, index % 12 + 1, 1) - timedelta(days=1)


def _gold_relative(text: str, anchor: GoldInterval) -> GoldInterval | None:
    """ "The Friday/week/weekend before D", "the week of D", "first weekend of <month>"."""
    day = anchor.first
    if "first weekend" in text or "第一个周末" in text:
        saturday = day + timedelta(days=(5 - day.weekday()) % 7)
        return GoldInterval(saturday, saturday + timedelta(days=1), "weekend")
    weekday = _weekday_before(text)
    if weekday is not None:
        found = day - timedelta(days=(day.weekday() - weekday - 1) % 7 + 1)
        return GoldInterval(found, found, "day")
    if "weekend" in text or "周末" in text:
        count = re.search(r"(two|three|2|3|两|二|三)\s*(?:weekends|个周末)", text)
        sunday = day - timedelta(days=(day.weekday() + 1) % 7 or 7)
        sunday -= timedelta(weeks=(_COUNTS[count[1]] - 1) if count else 0)
        return GoldInterval(sunday - timedelta(days=1), sunday, "weekend")
    return _gold_week_relative(text, day)


def _weekday_before(text: str) -> int | None:
    english = re.search(r"(monday|tuesday|wednesday|thursday|friday|saturday|sunday) before", text)
    if english:
        return WEEKDAYS[english[1]]
    chinese = re.search(r"前的那个(?:周|星期)([一二三四五六日天])", text)
    return _ZH_WEEKDAY[chinese[1]] if chinese else None


def _gold_week_relative(text: str, day: date) -> GoldInterval | None:
    if re.search(r"week of|那一周$|那周", text) and "前" not in text:
        return _gold_week(day, 0)
    weeks = re.search(r"(two|three|2|3|两|二|三)\s*(?:weeks|周|个星期)", text)
    if weeks and ("before" in text or "前" in text):
        return _gold_week(day, -_COUNTS[weeks[1]])
    if re.search(r"week before|前一周|前的那一周|前那一周|前一个星期", text):
        return _gold_week(day, -1)
    return None


def _gold_week(day: date, offset: int) -> GoldInterval:
    monday = day - timedelta(days=day.weekday()) + timedelta(weeks=offset)
    return GoldInterval(monday, monday + timedelta(days=6), "week")


def interval_matches(first: date, last: date, gold: GoldInterval) -> bool:
    """Most of the predicted interval lies in the gold one, and it is not coarser."""
    overlap = (min(last, gold.last) - max(first, gold.first)).days + 1
    predicted = (last - first).days + 1
    expected = (gold.last - gold.first).days + 1
    return overlap > 0 and 2 * overlap >= predicted and predicted <= expected + 1


# --- the pipeline -----------------------------------------------------------------------


@dataclass
class Derived:
    """One sample after ingest and derivation: its events and each message's time."""

    events: list[dict[str, Any]]
    times: dict[str, datetime]
    unsealed: int
    failed_jobs: int


async def derive_sample(sg: StrataGate, sample: Mapping[str, Any]) -> Derived:
    """Ingest the conversation only, seal every session, run the offline derivation."""
    space = str(sample["sample_id"])
    sessions = sessions_of(dict(sample["conversation"]))
    dia_of = await ingest(sg, space, sessions)
    report = await sg.derivation.process_pending()
    unsealed = sum([len(await sg.blocks.open_tail(space, s.thread_id)) for s in sessions])
    cards = await sg.events.cards(space, limit=100_000)
    times = {line.dia_id: s.at for s in sessions for line in s.lines if s.at is not None}
    return Derived([_cited(card, dia_of) for card in cards], times, unsealed, report.failed)


def _cited(card: EventCard, dia_of: Mapping[str, str]) -> dict[str, Any]:
    sources = [dia_of.get(message_id, message_id) for message_id in card.source_message_ids]
    return {"title": card.title, "sources": sources, "interval": event_interval(card.temporal)}


def event_interval(temporal: Mapping[str, Any]) -> tuple[date, date] | None:
    if not temporal.get("happened_start") or not temporal.get("happened_end"):
        return None
    start = datetime.fromisoformat(temporal["happened_start"]).date()
    return start, datetime.fromisoformat(temporal["happened_end"]).date()


def score_question(qa: Mapping[str, Any], derived: Derived) -> dict[str, Any] | None:
    """The question's row, or None without usable evidence or a parsable gold interval."""
    times = derived.times
    evidence = [e for e in evidence_ids(dict(qa)) if e in times]
    if not evidence:
        return None
    gold = parse_gold_answer(str(qa.get("answer", "")), times[evidence[0]].date())
    if gold is None:
        return None
    cited = [e for e in derived.events if set(e["sources"]) & set(evidence)]
    intervals = [e["interval"] for e in cited if e["interval"] is not None]
    baseline = any(interval_matches(times[e].date(), times[e].date(), gold) for e in evidence)
    return {
        "question": qa["question"], "answer": str(qa["answer"]),
        "gold": {key: str(value) for key, value in asdict(gold).items()},
        "evidence": evidence, "events": len(cited), "dated_events": len(intervals),
        "hit": any(interval_matches(first, last, gold) for first, last in intervals),
        "baseline_hit": baseline,
        "predicted": [f"{first}..{last}" for first, last in intervals],
    }  # fmt: skip


async def run(data: Path) -> dict[str, Any]:
    """Each sample in a fresh database; questions are read only after derivation."""
    rows: list[dict[str, Any]] = []
    totals: Counter[str] = Counter()
    for sample in json.loads(data.read_text(encoding="utf-8")):
        with tempfile.TemporaryDirectory() as scratch:
            config = MemoryConfig(block_turn_size=BLOCK_TURN_SIZE)
            async with await StrataGate.open(Path(scratch) / "locomo.db", config) as sg:
                derived = await derive_sample(sg, sample)
        totals.update(events=len(derived.events), unsealed=derived.unsealed,
                      failed_jobs=derived.failed_jobs)  # fmt: skip
        for qa in sample["qa"]:
            if qa.get("category") == 2:
                totals["temporal_questions"] += 1
                row = score_question(qa, derived)
                rows.extend([{"sample": str(sample["sample_id"]), **row}] if row else [])
    return summarize(data, totals, rows)


# --- report -----------------------------------------------------------------------------


def summarize(
    data: Path, totals: Mapping[str, int], rows: Sequence[dict[str, Any]]
) -> dict[str, Any]:
    hits = sum(r["hit"] for r in rows)
    baseline = sum(r["baseline_hit"] for r in rows)
    kinds = Counter(r["gold"]["kind"] for r in rows)
    by_kind = {
        kind: {"n": n, "pipeline": sum(r["hit"] for r in rows if r["gold"]["kind"] == kind),
               "baseline": sum(r["baseline_hit"] for r in rows if r["gold"]["kind"] == kind)}
        for kind, n in sorted(kinds.items())
    }  # fmt: skip
    return {
        "data": str(data), **totals, "scored": len(rows),
        "pipeline_hits": hits, "baseline_hits": baseline,
        "pipeline_share": round(hits / len(rows), 3) if rows else 0.0,
        "baseline_share": round(baseline / len(rows), 3) if rows else 0.0,
        "with_dated_event": sum(r["dated_events"] > 0 for r in rows),
        "by_kind": by_kind, "by_conversation": by_conversation(rows), "rows": list(rows),
    }  # fmt: skip


def by_conversation(rows: Sequence[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """Scored questions and pipeline hits per conversation: the rules were not fitted per
    conversation, so each one's share is also its held-out share."""
    out: dict[str, dict[str, int]] = {}
    for row in rows:
        counts = out.setdefault(row["sample"], {"n": 0, "pipeline": 0})
        counts["n"] += 1
        counts["pipeline"] += int(row["hit"])
    return out


def format_table(report: Mapping[str, Any]) -> str:
    lines = [
        f"{report['data']}: {report['scored']} of {report['temporal_questions']} temporal "
        f"questions have a parsable gold interval; {report['events']} events, "
        f"{report['unsealed']} unsealed messages, {report['failed_jobs']} failed jobs",
        "",
        f"{'gold kind':<10} {'n':>4} {'pipeline':>9} {'baseline':>9}",
    ]
    for kind, row in report["by_kind"].items():
        lines.append(f"{kind:<10} {row['n']:>4} {row['pipeline']:>9} {row['baseline']:>9}")
    lines.append(
        f"{'all':<10} {report['scored']:>4} {report['pipeline_hits']:>9} "
        f"{report['baseline_hits']:>9}"
    )
    lines.append("")
    for name, row in report["by_conversation"].items():
        lines.append(f"{name:<10} {row['n']:>4} {row['pipeline']:>9}")
    lines.append(
        f"share: pipeline {report['pipeline_share']:.3f}, "
        f"naive baseline (happened = message date) {report['baseline_share']:.3f}"
    )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    repo = Path(__file__).resolve().parent.parent
    parser.add_argument("--data", default=str(repo.parent / "shared/locomo/locomo-dev.json"))
    parser.add_argument("--out", required=True, help="where to write the JSON report")
    args = parser.parse_args()
    report = asyncio.run(run(Path(args.data)))
    Path(args.out).write_text(json.dumps(report, ensure_ascii=False, indent=1), encoding="utf-8")
    print(format_table(report))


if __name__ == "__main__":
    main()
