"""The offline model never crashes on a block, whatever its text (issue 24).

A block of only a time expression ("Friday is my day off." / "Okay.") used to stop the
summarizer with ``max() arg is an empty sequence``. Hypothesis feeds generated blocks
through the whole offline chain as derivation would: the summary (L0–L2), the event
extraction against a timeline (relations), then topic naming and graph projection of the
cards it drafted. Every answer must validate against its task's output type.
"""

import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stratagate_plugin.core.config import MemoryConfig
from stratagate_plugin.core.llm.base import ModelServerError, ScriptedModel
from stratagate_plugin.core.llm.offline.model import OfflineModel
from stratagate_plugin.core.llm.offline.text import clip
from stratagate_plugin.core.llm.offline.topics import unique_titles
from stratagate_plugin.core.llm.tasks import (
    EXTRACT_EVENT_CARDS,
    PROJECT_GRAPH,
    PROJECT_MEMORY_TOPICS,
    SUMMARIZE_BLOCK,
    BlockSummary,
    EventCardDraft,
    EventExtraction,
    GraphProjection,
    ProjectedTopic,
    TopicProjection,
)
from stratagate_plugin.core.memory import StrataGate
from stratagate_plugin.core.text.clean import valid_text

SENT = datetime(2026, 3, 6, 9, 30, tzinfo=UTC)  # a Friday
TIMELINE = [
    {
        "id": "ev_launch",
        "title": "Launch planned for May",
        "summary": "The team plans the launch for May 4.",
        "scope": "project",
        "status": "planned",
        "mentioned_at": "2026-03-01T10:00:00+00:00",
        "happened_start": "2026-05-04T00:00:00+00:00",
        "happened_end": None,
        "participants": ["Alice"],
        "event_type": "plan",
    }
]
TIME_ONLY = ["Friday is my day off.", "Okay.", "Yesterday.", "Next Monday at 3pm.",
             "2026-03-06", "in two weeks", "上周五", "明天下午三点。", "Q3 2027", "🙂"]  # fmt: skip
SAID = ["We moved the launch to June.", "I decided to adopt a cat named Mochi.",
        "Caroline: I went to Paris last week with Bob.", "我决定下个月搬到杭州。",
        "Mara: we cancelled the meeting on Friday", "❤️🔥🎉", "Привет, мир"]  # fmt: skip
ODD = ["", " ", "\t\n", "...", "?!", "—", "\x00\x07\x1b", "\ufffd", "Alice:"]
MIXED = st.characters(categories=["Lu", "Ll", "Lo", "Nd", "P", "Zs", "So", "Cc"])
PIECES = st.one_of(
    st.sampled_from(TIME_ONLY),
    st.sampled_from(ODD),
    st.sampled_from(SAID),
    st.text(MIXED, max_size=30),  # mixed scripts, punctuation, control characters
    st.text(st.characters(categories=["So", "Sk"]), min_size=1, max_size=8),  # emoji only
    st.integers(1, 3000).map(lambda n: "x" * n),  # one very long token
    st.text(st.characters(categories=["Cs"]), min_size=1, max_size=3),  # lone surrogates
)
CONTENT = st.lists(PIECES, max_size=4).map(" ".join).map(valid_text)
MESSAGE = st.tuples(st.sampled_from(["user", "assistant", "tool"]), CONTENT)


def messages(said: list[tuple[str, str]]) -> list[dict[str, Any]]:
    return [
        {
            "id": f"m{i}",
            "role": role,
            "content": content,
            "created_at": (SENT + timedelta(minutes=i)).isoformat(),
            "thread_id": "t",
            "tool_calls": [],
        }
        for i, (role, content) in enumerate(said)
    ]


def run(model: OfflineModel, name: str, output: type[Any], payload: dict[str, Any]) -> Any:
    return output.model_validate(model.answer(name, payload))


def compact(i: int, card: EventCardDraft) -> dict[str, Any]:
    """A drafted card as the topic and graph projectors receive it."""
    temporal = card.temporal or {}
    return {
        "id": f"ev{i}",
        "title": card.title,
        "summary": card.summary,
        "tags": card.tags,
        "quotes": card.quotes,
        "participants": temporal.get("participants") or [],
        "event_type": temporal.get("event_type") or "other",
        "criticality": card.criticality,
        "catalog_hints": card.catalog_hints,
        "status": temporal.get("status") or "unknown",
        "time": temporal.get("happened_start"),
        "mentioned_at": temporal.get("mentioned_at") or SENT.isoformat(),
        "happened_start": temporal.get("happened_start"),
        "created_at": SENT.isoformat(),
    }


@settings(
    max_examples=300,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(st.lists(MESSAGE, min_size=1, max_size=5))
def test_no_block_crashes_the_offline_model(said: list[tuple[str, str]]) -> None:
    model = OfflineModel()
    block = messages(said)
    summary = run(model, SUMMARIZE_BLOCK, BlockSummary, {"block": {"id": "b", "messages": block}})
    assert summary.title.strip() and summary.summary.strip()
    target = {"block_id": "b", "created_at": SENT.isoformat(), "messages": block}
    extraction = run(
        model,
        EXTRACT_EVENT_CARDS,
        EventExtraction,
        {
            "target": target,
            "neighbors": {"previous": summary.keypoints, "next": []},
            "allowed_source_message_ids": [m["id"] for m in block],
            "timeline": TIMELINE,
        },
    )
    events = [compact(i, card) for i, card in enumerate(extraction.events)]
    topics = run(
        model, PROJECT_MEMORY_TOPICS, TopicProjection, {"events": events, "candidates": []}
    )
    placed = {i for topic in topics.topics for i in topic.event_ids}
    assert placed <= {event["id"] for event in events}
    graph = run(model, PROJECT_GRAPH, GraphProjection, {"batch_id": "g", "events": events})
    cited = {i for node in graph.nodes for i in node.source_event_ids}
    assert cited <= {event["id"] for event in events}


def test_a_block_of_only_a_time_expression_is_summarised() -> None:
    """The reported block: its one content word is a weekday, which the summary's term
    weights leave out, so there were no weights at all."""
    block = messages([("user", "Friday is my day off."), ("assistant", "Okay.")])
    summary = run(OfflineModel(), SUMMARIZE_BLOCK, BlockSummary, {"block": {"messages": block}})
    assert any("Friday is my day off" in point for point in summary.keypoints)
    assert "Friday is my day off" in summary.summary


async def test_a_failed_block_does_not_hold_back_the_next_blocks_extraction(
    db_path: Path,
) -> None:
    """One failing block used to leave its thread's later blocks unextracted until its
    retries ran out: three ``process`` runs before the graph had anything."""
    model = ScriptedModel.of([ModelServerError("the first block fails")])
    memory = await StrataGate.open(
        db_path, MemoryConfig(block_turn_size=1, offline_fallback=False), model=model
    )
    try:
        await memory.blocks.append_turn("ns", "t", user="Friday is my day off.", assistant="Okay.")
        second = await memory.blocks.append_turn("ns", "t", user="We moved the launch to June.",
                                          assistant="Noted.")  # fmt: skip
        model.push(
            {"title": "Launch", "summary": "The launch moved.", "should_extract": True},
            {"should_extract": True, "events": [{"title": "Launch moved to June",
             "summary": "The launch moved to June.", "scope": "project",
             "source_message_ids": [second.message_ids[0]]}]},
        )  # fmt: skip
        report = await memory.derivation.process_pending(concurrency=1)
        assert (report.failed, report.succeeded) == (1, 2), report.errors
        [event] = await memory.events.cards()
        assert event.title == "Launch moved to June"
        statuses = {view.block.sequence: view.block.processing_status
                    for view in await memory.blocks.views()}  # fmt: skip
        assert statuses[2] == "ready" and statuses[1] != "ready"
    finally:
        await memory.close()


def test_two_new_chapters_with_one_long_title_are_told_apart() -> None:
    """Found by the fuzz test: a title of 120 characters made unique as ``Title (2)`` was
    clipped back to itself, so the topic pass looped for ever. Run on a daemon thread so
    a regression fails the test instead of hanging it."""
    long_title = "x" * 200  # one long token: no space to cut at
    topics = [ProjectedTopic(title=clip(long_title, 120), event_ids=[f"ev{i}"]) for i in (1, 2)]
    done: list[list[ProjectedTopic]] = []
    worker = threading.Thread(target=lambda: done.append(unique_titles(topics, {})), daemon=True)
    worker.start()
    worker.join(timeout=30)
    assert done, "making the titles unique did not finish"
    [first, second] = done[0]
    assert len(first.title) <= 120 and len(second.title) <= 120
    assert first.title != second.title and second.title.endswith(" (2)")
