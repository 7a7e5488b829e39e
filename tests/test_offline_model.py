"""The offline model: block summaries and event cards on small English and Chinese blocks."""

from typing import Any

import pytest

from stratagate_plugin.core.llm.base import ModelError, StructuredTask
from stratagate_plugin.core.llm.offline import OfflineModel
from stratagate_plugin.core.tasks import (
    EXTRACT_EVENT_CARDS,
    SUMMARIZE_BLOCK,
    BlockSummary,
    EventCardDraft,
    EventExtraction,
)

SENT = "2023-07-20T09:30:00+00:00"  # Thursday


def message(mid: str, role: str, content: str) -> dict[str, Any]:
    return {"id": mid, "role": role, "content": content, "created_at": SENT, "tool_calls": []}


ENGLISH = [
    message("m1", "user", "Caroline: Hey Mel! How have you been?"),
    message("m2", "assistant", "Melanie: Hi Caroline! Busy with the kids, as usual."),
    message(
        "m3",
        "user",
        "Caroline: I decided to adopt a child through the Riverside agency. "
        "I'm going to visit the agency next Monday.",
    ),
    message("m4", "assistant", "Melanie: I love pottery, it calms me down. My budget is $300."),
    message("m5", "user", "Caroline: We cancelled the camping trip to Yosemite."),
    message("m6", "user", "ok thanks"),
    message("m7", "assistant", "Melanie: What are you doing this weekend?"),
]
CHINESE = [
    message("c1", "user", "你好！"),
    message("c2", "user", "我决定下个月搬到杭州，新工作在阿里巴巴。"),
    message("c3", "assistant", "好的，收到。"),
    message("c4", "user", "我喜欢喝绿茶。上周五的会议取消了。"),
]


async def summarize(messages: list[dict[str, Any]]) -> BlockSummary:
    payload = {"block": {"id": "b1", "sequence": 1, "messages": messages}}
    return await OfflineModel().complete(StructuredTask(SUMMARIZE_BLOCK, BlockSummary, "", payload))


async def extract(messages: list[dict[str, Any]], allowed: list[str] | None = None) -> Any:
    ids = allowed if allowed is not None else [m["id"] for m in messages]
    payload = {
        "target": {"block_id": "b1", "created_at": SENT, "messages": messages},
        "neighbors": {"previous": [], "next": []},
        "allowed_source_message_ids": ids,
        "timeline": [],
    }
    return await OfflineModel().complete(
        StructuredTask(EXTRACT_EVENT_CARDS, EventExtraction, "", payload)
    )


def card_with(result: EventExtraction, words: str) -> EventCardDraft:
    matches = [card for card in result.events if words in card.summary]
    assert len(matches) == 1, [card.summary for card in result.events]
    return matches[0]


async def test_offline_summary_english_layers_are_salient() -> None:
    summary = await summarize(ENGLISH)
    assert summary.title and 2 <= len(summary.tags) <= 5
    assert any(word in summary.title.lower() for word in ("agency", "adopt", "riverside"))
    assert "agency" in " ".join(summary.tags).lower()
    assert 3 <= len(summary.keypoints) <= 8
    points = "\n".join(summary.keypoints)
    assert "Riverside" in points and "$300" in points
    assert "[next Monday = 2023-07-24]" in points
    assert summary.summary.startswith(("Caroline:", "Melanie:"))
    assert summary.should_extract


async def test_offline_summary_chinese_layers() -> None:
    summary = await summarize(CHINESE)
    assert summary.title and summary.tags
    assert any("杭州" in point for point in summary.keypoints)
    assert summary.should_extract


async def test_offline_summary_of_fillers_does_not_extract() -> None:
    summary = await summarize([message("f1", "user", "ok thanks"), message("f2", "user", "hi!")])
    assert summary.title and summary.summary
    assert not summary.should_extract


async def test_offline_extract_english_decision_plan_preference_cancellation() -> None:
    result = await extract(ENGLISH)
    decision = card_with(result, "decided to adopt")
    assert decision.temporal and decision.temporal["event_type"] == "decision"
    assert decision.source_message_ids == ["m3"] and decision.summary.startswith("Caroline:")
    assert "Riverside" in decision.temporal["participants"]
    plan = card_with(result, "visit the agency")
    assert plan.temporal and plan.temporal["happened_start"] == "2023-07-24T00:00:00+00:00"
    assert plan.temporal["happened_end"] == "2023-07-24T23:59:59+00:00"
    assert (plan.temporal["precision"], plan.temporal["basis"]) == ("day", "relative")
    assert plan.temporal["status"] == "planned" and plan.temporal["mentioned_at"] == SENT
    preference = card_with(result, "I love pottery")
    assert preference.criticality == "preference" and preference.scope == "user"
    cancelled = card_with(result, "cancelled the camping trip")
    assert cancelled.temporal and cancelled.temporal["status"] == "cancelled"
    assert cancelled.temporal["event_type"] == "cancellation"


async def test_offline_extract_skips_fillers_greetings_and_questions() -> None:
    result = await extract(ENGLISH)
    cited = {mid for card in result.events for mid in card.source_message_ids}
    assert cited.isdisjoint({"m1", "m2", "m6", "m7"})
    assert all(card.title and len(card.title) <= 120 for card in result.events)


async def test_offline_extract_only_cites_allowed_messages() -> None:
    result = await extract(ENGLISH, allowed=["m4"])
    assert result.events
    assert all(card.source_message_ids == ["m4"] for card in result.events)
    nothing = await extract([message("q", "user", "Can you help me?"), message("o", "user", "ok")])
    assert not nothing.should_extract and nothing.events == []


async def test_offline_extract_chinese_events() -> None:
    result = await extract(CHINESE)
    move = card_with(result, "搬到杭州")
    assert move.temporal and move.temporal["precision"] == "month"
    assert move.temporal["happened_start"].startswith("2023-08-01")
    assert move.temporal["status"] == "planned"
    assert card_with(result, "喜欢喝绿茶").criticality == "preference"
    meeting = card_with(result, "会议取消")
    assert meeting.temporal and meeting.temporal["status"] == "cancelled"
    assert meeting.temporal["happened_start"].startswith("2023-07-14")
    assert all(card.source_message_ids[0] in {"c2", "c4"} for card in result.events)


async def test_offline_model_is_deterministic() -> None:
    first = (await summarize(ENGLISH), await extract(ENGLISH), await extract(CHINESE))
    second = (await summarize(ENGLISH), await extract(ENGLISH), await extract(CHINESE))
    assert [r.model_dump() for r in first] == [r.model_dump() for r in second]


async def test_offline_model_refuses_unknown_tasks() -> None:
    with pytest.raises(ModelError):
        await OfflineModel().complete(StructuredTask("decide_memory", BlockSummary, "", {}))
