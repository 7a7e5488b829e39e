"""LoCoMo temporal questions: do offline event cards carry the right happened interval?

    .venv/bin/python benchmarks/locomo_temporal_offline.py \
        --data ../shared/locomo/locomo-dev.json --out /tmp/locomo-temporal.json

Each session becomes messages (speaker_a = user, speaker_b = assistant, content
"<speaker>: <text>", created_at = the session time as UTC) cut into blocks of 6 user turns,
and the offline model extracts event cards per block. For category-2 questions whose gold
answer parses to a date, week, weekend, month, season or year, a hit is an event citing an
evidence message whose happened interval matches the gold (``interval_matches``). The
naive baseline dates every evidence message at its own day, scored the same way.
"""

import argparse
import asyncio
import json
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

from stratagate_plugin.core.llm.base import StructuredTask
from stratagate_plugin.core.llm.offline import OfflineModel
from stratagate_plugin.core.tasks import EXTRACT_EVENT_CARDS, EventExtraction
from stratagate_plugin.core.temporal_patterns import EN_MONTHS, WEEKDAYS

BLOCK_USER_TURNS = 6
_EN_DATE = re.compile(
    r"(?:(?P<d1>\d{1,2})\s+(?P<m1>[a-z]+)|(?P<m2>[a-z]+)\s+(?P<d2>\d{1,2}))[,\s]+(?P<y>\d{4})"
)
_EN_MONTH = re.compile(r"(?P<m>[a-z]+)[,.\s]+(?P<y>\d{4})")
_EN_DAY_NO_YEAR = re.compile(r"^(?P<d>\d{1,2})\s+(?P<m>[a-z]+)$")
_ZH_DATE = re.compile(r"(?:(?P<y>\d{4})年)?(?P<m>\d{1,2})月(?:(?P<d>\d{1,2})日)?")
_ZH_WEEKDAY = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6}
_SEASONS = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12}
_COUNTS = {"two": 2, "three": 3, "four": 4, "2": 2, "3": 3, "两": 2, "二": 2, "三": 3}


@dataclass(frozen=True)
class GoldInterval:
    """A gold answer as an inclusive day interval and its kind (day, week, month …)."""

    first: date
    last: date
    kind: str


def parse_session_time(text: str) -> datetime:
    """``1:56 pm on 8 May, 2023`` or ``2023年5月8日下午1:56`` → a UTC datetime."""
    zh = re.search(r"(\d{4})年(\d{1,2})月(\d{1,2})日\s*([^\d\s]*)\s*(\d{1,2}):(\d{2})", text)
    if zh:
        afternoon = zh[4] in ("下午", "晚上", "傍晚") or (zh[4] == "中午" and int(zh[5]) < 11)
        hour = int(zh[5]) % 12 + (12 if afternoon else 0)
        return datetime(int(zh[1]), int(zh[2]), int(zh[3]), hour, int(zh[6]), tzinfo=UTC)
    found = datetime.strptime(" ".join(text.replace(",", " ").split()), "%I:%M %p on %d %B %Y")
    return found.replace(tzinfo=UTC)


def normal_evidence(ids: Sequence[str]) -> list[str]:
    """Repairs "D8:6; D9:17", "D:11:26" and zero padding ("D30:05")."""
    found = re.findall(r"D:?(\d+):0*(\d+)", " ".join(ids))
    return [f"D{session}:{turn}" for session, turn in found]


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
    return (
        anchor
        if anchor.kind != "day" or not re.search(r"before|前|week|周|weekend", text)
        else None
    )


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
    return (
        GoldInterval(date(int(year[1]), 1, 1), date(int(year[1]), 12, 31), "year") if year else None
    )


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
    weekday = re.search(r"(monday|tuesday|wednesday|thursday|friday|saturday|sunday) before", text)
    zh_weekday = re.search(r"前的那个(?:周|星期)([一二三四五六日天])", text)
    if weekday or zh_weekday:
        index = WEEKDAYS[weekday[1]] if weekday else _ZH_WEEKDAY[zh_weekday[1]] if zh_weekday else 0
        found = day - timedelta(days=(day.weekday() - index - 1) % 7 + 1)
        return GoldInterval(found, found, "day")
    if "weekend" in text or "周末" in text:
        count = re.search(r"(two|three|2|3|两|二|三)\s*(?:weekends|个周末)", text)
        sunday = day - timedelta(days=(day.weekday() + 1) % 7 or 7)
        sunday -= timedelta(weeks=(_COUNTS[count[1]] - 1) if count else 0)
        return GoldInterval(sunday - timedelta(days=1), sunday, "weekend")
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


def event_interval(card: Mapping[str, Any]) -> tuple[date, date] | None:
    temporal = card.get("temporal") or {}
    if not temporal.get("happened_start") or not temporal.get("happened_end"):
        return None
    start = datetime.fromisoformat(temporal["happened_start"]).date()
    return start, datetime.fromisoformat(temporal["happened_end"]).date()


def session_messages(conversation: Mapping[str, Any]) -> list[list[dict[str, Any]]]:
    """Per session, the message dicts of the derivation view."""
    sessions = []
    numbers = sorted(int(k.split("_")[1]) for k in conversation if re.fullmatch(r"session_\d+", k))
    for number in numbers:
        when = parse_session_time(conversation[f"session_{number}_date_time"]).isoformat()
        sessions.append([_message(turn, conversation["speaker_a"], when)
                         for turn in conversation[f"session_{number}"]])  # fmt: skip
    return sessions


def _message(turn: Mapping[str, Any], speaker_a: str, when: str) -> dict[str, Any]:
    role = "user" if turn["speaker"] == speaker_a else "assistant"
    content = f"{turn['speaker']}: {turn['text']}"
    return {"id": turn["dia_id"], "role": role, "content": content, "created_at": when}


def blocks_of(messages: Sequence[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Cut before the 7th user turn, like sealed blocks of 6 user turns."""
    blocks: list[list[dict[str, Any]]] = [[]]
    users = 0
    for message in messages:
        if message["role"] == "user" and users == BLOCK_USER_TURNS:
            blocks.append([])
            users = 0
        users += message["role"] == "user"
        blocks[-1].append(message)
    return [block for block in blocks if block]


async def extract_sample(
    model: OfflineModel, conversation: Mapping[str, Any]
) -> list[dict[str, Any]]:
    cards: list[dict[str, Any]] = []
    for session in session_messages(conversation):
        for block in blocks_of(session):
            payload = {"target": {"messages": block},
                       "allowed_source_message_ids": [m["id"] for m in block]}  # fmt: skip
            task = StructuredTask(EXTRACT_EVENT_CARDS, EventExtraction, "", payload)
            result = await model.complete(task)
            cards.extend(card.model_dump() for card in result.events)
    return cards


def score_question(
    qa: Mapping[str, Any], cards: Sequence[Mapping[str, Any]], times: Mapping[str, datetime]
) -> dict[str, Any] | None:
    evidence = [e for e in normal_evidence(qa.get("evidence", [])) if e in times]
    if not evidence:
        return None
    gold = parse_gold_answer(str(qa.get("answer", "")), times[evidence[0]].date())
    if gold is None:
        return None
    cited = [c for c in cards if set(c["source_message_ids"]) & set(evidence)]
    intervals = [i for i in map(event_interval, cited) if i is not None]
    baseline = any(interval_matches(times[e].date(), times[e].date(), gold) for e in evidence)
    shown = {key: str(value) for key, value in asdict(gold).items()}
    return {
        "question": qa["question"], "answer": str(qa["answer"]), "gold": shown,
        "evidence": evidence, "events": len(cited), "dated_events": len(intervals),
        "hit": any(interval_matches(first, last, gold) for first, last in intervals),
        "baseline_hit": baseline,
        "predicted": [f"{first}..{last}" for first, last in intervals],
    }  # fmt: skip


async def run(data: Path) -> dict[str, Any]:
    model = OfflineModel()
    rows: list[dict[str, Any]] = []
    temporal_questions = 0
    for sample in json.loads(data.read_text(encoding="utf-8")):
        conversation = sample["conversation"]
        cards = await extract_sample(model, conversation)
        times = {m["id"]: datetime.fromisoformat(m["created_at"])
                 for session in session_messages(conversation) for m in session}  # fmt: skip
        for qa in sample["qa"]:
            if qa.get("category") == 2:
                temporal_questions += 1
                row = score_question(qa, cards, times)
                rows.extend([row] if row else [])
    return summarize(data, temporal_questions, rows)


def summarize(data: Path, total: int, rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    hits = sum(r["hit"] for r in rows)
    baseline = sum(r["baseline_hit"] for r in rows)
    kinds = Counter(r["gold"]["kind"] for r in rows)
    by_kind = {kind: {"n": n, "offline": sum(r["hit"] for r in rows if r["gold"]["kind"] == kind),
                      "baseline": sum(r["baseline_hit"] for r in rows if r["gold"]["kind"] == kind)}
               for kind, n in sorted(kinds.items())}  # fmt: skip
    return {
        "data": str(data), "temporal_questions": total, "scored": len(rows),
        "offline_hits": hits, "baseline_hits": baseline,
        "offline_share": round(hits / len(rows), 3) if rows else 0.0,
        "baseline_share": round(baseline / len(rows), 3) if rows else 0.0,
        "with_dated_event": sum(r["dated_events"] > 0 for r in rows),
        "by_kind": by_kind, "rows": list(rows),
    }  # fmt: skip


def format_table(report: Mapping[str, Any]) -> str:
    lines = [f"{report['data']}: {report['scored']} of {report['temporal_questions']} "
             "temporal questions have a parsable gold interval", "",
             f"{'gold kind':<10} {'n':>4} {'offline':>8} {'baseline':>9}"]  # fmt: skip
    for kind, row in report["by_kind"].items():
        lines.append(f"{kind:<10} {row['n']:>4} {row['offline']:>8} {row['baseline']:>9}")
    lines.append(f"{'all':<10} {report['scored']:>4} {report['offline_hits']:>8} "
                 f"{report['baseline_hits']:>9}")  # fmt: skip
    lines.append(f"share: offline {report['offline_share']:.3f}, "
                 f"naive baseline {report['baseline_share']:.3f}")  # fmt: skip
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--data", default="../shared/locomo/locomo-dev.json")
    parser.add_argument("--out", required=True, help="where to write the JSON report")
    args = parser.parse_args()
    report = asyncio.run(run(Path(args.data)))
    Path(args.out).write_text(json.dumps(report, ensure_ascii=False, indent=1), encoding="utf-8")
    print(format_table(report))


if __name__ == "__main__":
    main()
