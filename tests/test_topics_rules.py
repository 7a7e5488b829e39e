"""The topic catalog's pure rules: validation (§5.4), fingerprints (§5.2), the historical
budget (§5.3), batches, categories, and the directory's 400-token budget (§5.5)."""

import json
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from cards import T0, event_card

from stratagate_plugin.core.errors import InvalidInput
from stratagate_plugin.core.llm.tasks import TopicProjection
from stratagate_plugin.core.text.token_budget import estimate_tokens
from stratagate_plugin.core.topics import budget
from stratagate_plugin.core.topics.batching import (
    BATCH_CHARS,
    CANDIDATE_CHARS,
    INPUT_TOKENS,
    compact_event,
    exposed_payload,
    make_batches,
    size,
)
from stratagate_plugin.core.topics.categories import CATEGORIES, event_category, majority_category
from stratagate_plugin.core.topics.directory import (
    SECTION_PAGE,
    Entry,
    Listing,
    bounded_topic,
    render_directory,
    section_page,
)
from stratagate_plugin.core.topics.directory_words import WORDS, ZH, directory_language
from stratagate_plugin.core.topics.fingerprint import event_fingerprint
from stratagate_plugin.core.topics.model import FALLBACK_DESCRIPTION, Topic, label_key
from stratagate_plugin.core.topics.validation import InvalidProjection, validate_projection

BATCH = ["e1", "e2", "e3"]
OLD = Topic(
    id="topic_old",
    namespace="ns",
    title="Pottery",
    member_ids=["e0"],
    sections=[{"title": "Classes", "event_ids": ["e0"]}],
    overview=[{"kind": "history", "title": "Classes", "text": "Started.", "event_ids": ["e0"]}],
    created_at=T0,
    updated_at=T0,
)


def projection(*topics: dict[str, Any]) -> TopicProjection:
    return TopicProjection.model_validate({"topics": list(topics)})


def check(result: TopicProjection, labels: dict[str, str] | None = None) -> None:
    labels = {"pottery": "topic_old"} if labels is None else labels
    validate_projection(result, BATCH, {"topic_old": OLD}, labels)


GOOD = {
    "topic_id": "topic_old",
    "title": "Pottery",
    "event_ids": BATCH,
    "sections": [{"title": "Classes", "event_ids": BATCH}],
    "overview": [{"kind": "history", "title": "Classes", "text": "More.", "event_ids": ["e1"]}],
}


def test_a_valid_projection_passes_and_may_repeat_an_old_paragraph_verbatim() -> None:
    kept = {**GOOD, "overview": [*GOOD["overview"], OLD.overview[0].model_dump()]}
    check(projection(kept))
    check(projection({"title": "Chess", "event_ids": BATCH}))


@pytest.mark.parametrize(
    ("broken", "reason"),
    [
        ([], "0 topics"),
        ([{**GOOD, "event_ids": ["e1", "e2"], "sections": []}], "placed in no topic: e3"),
        ([GOOD, {"title": "Glazes", "event_ids": ["e1"]}], "placed in two topics"),
        ([{**GOOD, "event_ids": [*BATCH, "e9"]}], "not a batch event"),
        ([{**GOOD, "topic_id": "topic_unseen"}], "not offered"),
        ([{"title": "Garden", "event_ids": BATCH}], "title of another chapter"),
        (
            [{"title": " POTTERY ", "event_ids": BATCH}],
            "title of another chapter: give its topic_id",
        ),
        (
            [{"title": "A b", "event_ids": ["e1"]}, {"title": "a  B", "event_ids": ["e2", "e3"]}],
            "two topics are labelled",
        ),
        ([{**GOOD, "sections": [{"title": "Classes", "event_ids": ["e1"]}]}], "out of every"),
        ([{**GOOD, "sections": [{"title": "New", "event_ids": [*BATCH, "e0"]}]}], "reassigns"),
        (
            [{**GOOD, "overview": [{"kind": "history", "text": "x", "event_ids": ["e0"]}]}],
            "verbatim",
        ),
        (
            [
                {
                    **GOOD,
                    "overview": [
                        {"kind": "scope", "title": "Nope", "text": "x", "event_ids": ["e1"]}
                    ],
                }
            ],
            "names no section",
        ),
        (
            [
                {
                    **GOOD,
                    "overview": [
                        {"kind": "change", "text": f"p{i}", "event_ids": ["e1"]} for i in range(9)
                    ],
                }
            ],
            "at most 8",
        ),
        ([{"title": f"T{i}", "event_ids": [BATCH[i % 3]]} for i in range(13)], "1–12"),
    ],
)
def test_a_broken_rule_rejects_the_whole_projection(broken: list[Any], reason: str) -> None:
    labels = {"pottery": "topic_old", "garden": "topic_hidden"}
    result = projection(*broken)
    with pytest.raises(InvalidProjection, match=reason):
        check(result, labels)


def test_truncated_events_support_only_scope_paragraphs() -> None:
    para = {"kind": "history", "text": "x", "event_ids": ["e1"]}
    topic = {"title": "Chess", "event_ids": BATCH, "overview": [para]}
    with pytest.raises(InvalidProjection, match="only scope"):
        validate_projection(projection(topic), BATCH, {}, {}, ["e1"])
    topic["overview"] = [{**para, "kind": "scope"}]
    validate_projection(projection(topic), BATCH, {}, {}, ["e1"])


def test_the_fingerprint_ignores_bookkeeping_and_follows_text_and_status() -> None:
    card = event_card("e1", summary="We moved the sale.", temporal={"participants": ["Ann"]})
    same = card.model_copy(
        update={
            "mention_count": 9,
            "last_adopted_turn": 40,
            "last_retrieved_at": T0 + timedelta(days=3),
            "pinned": True,
            "floor_weight": 0.5,
            "forced_cap": 0.1,
            "updated_at": T0 + timedelta(days=3),
            "formed_turn": 12,
            "temporal": {"participants": ["Ann"], "participant_node_ids": ["node_1"]},
        }
    )
    assert event_fingerprint(same) == event_fingerprint(card)
    for change in (
        {"summary": "We cancelled the sale."},
        {"status": "forgotten"},
        {"status": "superseded"},
        {"title": "x"},
    ):
        assert event_fingerprint(card.model_copy(update=change)) != event_fingerprint(card)


def test_the_historical_budget_grants_two_per_window_and_a_corrupt_ledger_none() -> None:
    now = datetime(2024, 5, 1, tzinfo=UTC)
    granted, ledger = budget.reserve(None, now)
    assert granted
    granted, ledger = budget.reserve(ledger, now + timedelta(minutes=1))
    assert granted
    granted, ledger = budget.reserve(ledger, now + timedelta(minutes=9))
    assert not granted and json.loads(ledger)["used"] == 2
    granted, ledger = budget.reserve(ledger, now + timedelta(minutes=10))
    assert granted and json.loads(ledger)["used"] == 1
    granted, ledger = budget.reserve("{not json", now)
    assert not granted
    assert not budget.reserve(ledger, now + timedelta(minutes=5))[0]
    assert budget.reserve(ledger, now + timedelta(minutes=10))[0]


def test_batches_hold_at_most_12_events_within_16000_characters() -> None:
    small = [event_card(f"e{i}", summary="short") for i in range(30)]
    assert [len(b) for b in make_batches(small)] == [12, 12, 6]
    big = [event_card(f"b{i}", summary="x" * 1000, title="y" * 200) for i in range(30)]
    batches = make_batches(big)
    assert all(
        sum(size(compact_event(c)) for c in big if c.id in b) <= BATCH_CHARS for b in batches
    )
    assert [i for b in batches for i in b] == [c.id for c in big]
    assert "quotes" not in compact_event(big[0]) and "source_message_ids" not in compact_event(
        big[0]
    )


def test_categories_by_criticality_then_type_and_majority_ties_in_fixed_order() -> None:
    assert event_category("preference", "release") == "preferences"
    assert event_category("routine", "plan") == "decisions"
    assert event_category("routine", "incident") == "work"
    assert event_category("routine", "meeting") == "relationships"
    assert event_category("routine", None) == "other"
    assert majority_category(["work", "other", "other"]) == "other"
    assert majority_category(["other", "decisions"]) == "decisions"
    assert label_key("  Ｓtrata\tGate ") == "strata gate"


def entries(count: int, title: str, description: str) -> list[Entry]:
    return [
        Entry(
            id=f"topic_{n:030d}",
            title=f"{title} {n}",
            description=description,
            category=CATEGORIES[n % len(CATEGORIES)],
            source_event_count=3,
        )
        for n in range(count)
    ]


@pytest.mark.parametrize("count", [1, 12, 500])
@pytest.mark.parametrize(
    ("title", "description"),
    [
        ("Pottery classes and the spring sale", "What was decided"),
        ("求职与职业发展" * 12, "尚未归入主题" * 10),
    ],
)
@pytest.mark.parametrize("language", ["en", "zh"])
def test_the_directory_fits_400_tokens_and_every_category_stays_reachable(
    count: int, title: str, description: str, language: str
) -> None:
    every = entries(count, title, description)
    counts: dict[str, int] = {}
    firsts: dict[str, Entry] = {}
    for entry in every:
        counts[entry.category] = counts.get(entry.category, 0) + 1
        firsts.setdefault(entry.category, entry)
    text = render_directory(Listing(count, every[:30], counts, firsts), language=language)
    words = WORDS[language]
    assert estimate_tokens(text) <= 400
    assert text.startswith(words.header) and words.notice in text
    shown = [c for c in CATEGORIES if c in counts]
    listed = all(entry.id in text for entry in every)
    if listed:
        assert f"{every[0].id}{words.entry_sep}" in text
    else:  # the overview form: every category with its count, and how to page
        for c in shown:
            line = words.category_line.format(id=c, label=words.labels[c], count=counts[c])
            assert line in text
        assert words.paging in text and f"{count}" in text
    assert listed or count > 1
    assert render_directory(Listing(0, []), language=language) == ""


def test_the_chinese_directory_has_chinese_labels_and_separators() -> None:
    every = [
        Entry(
            id="topic_a",
            title="求职",
            description="面试安排",
            category="work",
            source_event_count=2,
        ),
        Entry(
            id="fallback:e1",
            title="喝绿茶",
            description=FALLBACK_DESCRIPTION,
            category="preferences",
            source_event_count=1,
            is_fallback=True,
        ),
    ]
    text = render_directory(Listing(2, every, {"work": 1, "preferences": 1}), language="zh")
    assert text.splitlines() == [
        "[StrataGate 记忆目录]",
        ZH.notice,
        "- topic_a：求职；面试安排",
        "- fallback:e1：喝绿茶；尚未归入主题，查看事件获得详情。",
    ]
    crowded = render_directory(
        Listing(500, every, {"work": 499, "preferences": 1}, {"work": every[0]}), language="zh"
    )
    assert "- work（工作与结果）：499" in crowded and "- preferences（偏好与要求）：1" in crowded
    assert "共 500 个条目，2 个类别：" in crowded and "每个类别的第一个条目：" in crowded
    assert "Preferences" not in crowded and "entries" not in crowded


@pytest.mark.parametrize(
    ("preferred", "titles", "language"),
    [
        ("", ["小明", "绿茶与咖啡"], "zh"),
        ("", ["Pottery", "小明"], "en"),
        ("中文", ["Pottery"], "zh"),
        ("Simplified Chinese", ["Pottery"], "zh"),
        ("zh-CN", [], "zh"),
        ("English", ["小明", "小红"], "en"),
        ("French", ["小明"], "zh"),  # neither: the titles decide
        ("", [], "en"),
    ],
)
def test_the_directory_language_follows_the_profile_then_its_titles(
    preferred: str, titles: list[str], language: str
) -> None:
    assert directory_language(preferred, titles) == language


def opened_topic(
    members: list[str],
    sections: list[tuple[str, list[str]]],
    paragraphs: Sequence[tuple[str, list[str]]] = (),
    words: int = 110,
) -> tuple[Topic, Entry]:
    """A ready chapter ``topic_big`` of ``members`` with these sections and history
    paragraphs (title, event ids), and its directory entry."""
    topic = Topic(
        id="topic_big",
        namespace="ns",
        title="Big",
        member_ids=members,
        sections=[{"title": title, "event_ids": ids} for title, ids in sections],
        overview=[
            {"kind": "history", "title": title, "text": "word " * words, "event_ids": ids}
            for title, ids in paragraphs
        ],
        created_at=T0,
        updated_at=T0,
    )
    entry = Entry(
        id="topic_big",
        title="Big",
        description="",
        category="other",
        source_event_count=len(members),
    )
    return topic, entry


def test_an_expanded_topic_fits_2400_tokens_and_says_what_it_left_out() -> None:
    members = [f"evt_{n:026d}" for n in range(300)]
    parts = [(f"Section {n}", members[n * 3 : n * 3 + 3]) for n in range(100)]
    topic, entry = opened_topic(members, parts, parts)
    shown = bounded_topic("ns", entry, topic)
    assert estimate_tokens(json.dumps(shown, ensure_ascii=False)) <= 2400
    assert shown["navigationOnly"] is True and shown["sourceEventIds"] == members[:12]
    assert shown["totalSourceEvents"] == 300 and shown["omittedSourceEvents"] == 288
    assert shown["totalSections"] == 100
    assert len(shown["sections"]) + shown["omittedSections"] == 100
    assert len(shown["overview"]) + shown["omittedOverviewParagraphs"] == 100
    assert shown["omittedOverviewParagraphs"] > 0 and shown["sections"][0]["title"] == "Section 0"
    assert shown["eventRetrieval"] == {
        "tool": "memory_search_events",
        "topic_id": "topic_big",
        "query": "",
        "offset": 0,
    }


def test_a_long_section_shows_its_first_page_and_pages_on_within_the_bound() -> None:
    members = [f"evt_{n:026d}" for n in range(40)]
    topic, entry = opened_topic(members, [("Short", members[:3]), ("Long", members[3:])])
    shown = bounded_topic("ns", entry, topic)
    assert estimate_tokens(json.dumps(shown, ensure_ascii=False)) <= 2400
    short, long = shown["sections"]
    assert (short["number"], short["eventIds"], short["nextOffset"]) == (1, members[:3], None)
    assert long["eventIds"] == members[3 : 3 + SECTION_PAGE] and long["nextOffset"] == 9
    assert shown["sectionPaging"]["tool"] == "memory_expand_topic"
    assert shown["omittedSectionPages"] == 0
    seen, offset = [], 0
    while offset is not None:
        page = section_page("ns", entry, topic, 2, offset)["section"]
        assert len(page["eventIds"]) <= SECTION_PAGE and page["sourceEventCount"] == 37
        seen += page["eventIds"]
        offset = page["nextOffset"]
    assert seen == members[3:]  # every member reached, in order, once
    for number, start in ((0, 0), (3, 0), (1, -1)):
        with pytest.raises(InvalidInput, match="section must be 1–2"):
            section_page("ns", entry, topic, number, start)
    fallback = Entry(
        id="fallback:e1", title="E", description="", category="other", source_event_count=1
    )
    with pytest.raises(InvalidInput, match="no sections"):
        section_page("ns", fallback, None, 1, 0)


def test_section_pages_yield_to_the_index_and_overview_in_a_crowded_topic() -> None:
    members = [f"evt_{n:026d}" for n in range(300)]
    sections = [(f"S{n}", members[n * 30 : n * 30 + 30]) for n in range(10)]
    topic, entry = opened_topic(members, sections, [(f"S{n}", [members[n]]) for n in range(10)])
    shown = bounded_topic("ns", entry, topic)
    assert estimate_tokens(json.dumps(shown, ensure_ascii=False)) <= 2400
    assert len(shown["sections"]) == 10 and shown["omittedSections"] == 0
    paged = [s for s in shown["sections"] if "eventIds" in s]
    assert len(shown["overview"]) == 10  # the whole overview first, then pages while they fit
    assert 0 < len(paged) < 10 and shown["omittedSectionPages"] == 10 - len(paged)
    assert paged == shown["sections"][: len(paged)]
    assert all(s["nextOffset"] == SECTION_PAGE for s in paged)


def _view(topic_id: str, chars: int, letter: str = "y") -> dict[str, Any]:
    return {"topic_id": topic_id, "title": topic_id, "description": letter * chars}


def test_candidates_fit_30000_characters_less_the_batch_best_first() -> None:
    events = [compact_event(event_card(f"e{n}", summary="x" * 1000)) for n in range(10)]
    batch = sum(size(e) for e in events)
    views = [_view("t0", 8000), _view("t1", 12000), _view("t2", 3000), _view("t3", 3000)]
    payload = exposed_payload(events, [], views, "instructions")
    shown = [v["topic_id"] for v in payload["candidates"]]
    assert batch + sum(size(v) for v in payload["candidates"]) <= CANDIDATE_CHARS
    assert shown == ["t0", "t2", "t3"]  # t1 does not fit what t0 left; smaller ones still do
    assert payload["events"] == events and payload["truncated_event_ids"] == []


def test_the_lowest_candidates_go_until_the_input_fits_20000_tokens_never_the_events() -> None:
    events = [compact_event(event_card(f"e{n}", summary="事" * 1000)) for n in range(12)]
    views = [_view(f"t{n}", 4000, "章") for n in range(4)]
    payload = exposed_payload(events, [], views, "instructions")
    text = json.dumps(payload, ensure_ascii=False)
    assert estimate_tokens("instructions") + estimate_tokens(text) <= INPUT_TOKENS
    kept = [v["topic_id"] for v in payload["candidates"]]
    assert 0 < len(kept) < 4 and kept == [f"t{n}" for n in range(len(kept))]
    assert payload["events"] == events  # all twelve, whole
    huge = [compact_event(event_card(f"h{n}", summary="事" * 2000)) for n in range(12)]
    alone = exposed_payload(huge, [], views, "instructions")
    assert alone["candidates"] == [] and alone["events"] == huge  # over budget: events alone
