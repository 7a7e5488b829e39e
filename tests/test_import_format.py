"""The v2 external-memory document (spec §11.1): limits, refusals, recovery readers, fuzz."""

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from imports import candidate, document
from strategies import json_values, texts

from stratagate_plugin.core.errors import InvalidInput
from stratagate_plugin.core.importer.external_format import NotJson, parse_external
from stratagate_plugin.core.importer.sources import recover_offline, to_document


def one(**fields: Any) -> dict[str, Any]:
    return {**candidate("Lives in Lyon", "The user lives in Lyon."), **fields}


def test_a_fenced_v2_document_is_read_with_its_limits() -> None:
    text = document(
        one(
            category="identity",
            title="t" * 300,
            summary="s" * 3000,
            narrative="n" * 9000,
            tags=[f"tag{i}" for i in range(20)],
            quotes=["q" * 600] * 3 + [f"quote {i}" for i in range(20)],
            temporal={
                "originalText": "o" * 300,
                "eventType": "e" * 100,
                "participants": [f"p{i}" for i in range(30)],
            },
            confidence=7,
        ),
        candidate("No summary", summary=""),
        {"summary": "no title"},
        sourceSystem="chatgpt",
    )
    parsed = parse_external(f"```json\n{text}\n```")
    [kept] = parsed.candidates
    assert (len(kept.title), len(kept.summary), len(kept.narrative or "")) == (160, 2000, 8000)
    assert kept.tags[0] == "identity" and len(kept.tags) == 12
    assert len(kept.quotes) == 12 and len(kept.quotes[0]) == 500
    assert (
        len(kept.temporal.original_text or "") == 200 and len(kept.temporal.event_type or "") == 80
    )
    assert len(kept.temporal.participants) == 24 and kept.confidence == 1.0
    assert (parsed.dropped, parsed.source_system) == (2, "chatgpt")


def test_v1_the_events_alias_and_an_absent_schema_version_are_accepted() -> None:
    v1 = json.dumps({"schemaVersion": "stratagate.external-memory.v1", "events": [one()]})
    bare = json.dumps({"candidates": [one(confidence=-3)]})
    assert [c.title for c in parse_external(v1).candidates] == ["Lives in Lyon"]
    assert parse_external(bare).candidates[0].confidence == 0.0


WRONG_TYPES = [
    ({"schemaVersion": 2}, "schemaVersion"),
    ({"schemaVersion": "stratagate.external-memory.v9"}, "schemaVersion"),
    ({"sourceType": "chat_log"}, "sourceType"),
    ({"sourceSystem": ["x"]}, "sourceSystem"),
    ({"exportedAt": 1700000000}, "exportedAt"),
    ({"candidates": "many"}, "candidates"),
    ({"coverage": "most"}, "coverage"),
    ({"coverageNote": 3}, "coverageNote"),
    ({"uncertainItems": "x"}, "uncertainItems"),
]
WRONG_CANDIDATE_FIELDS = [
    ({"memoryKind": "opinion"}, "memoryKind"),
    ({"category": "hobby"}, "category"),
    ({"title": 5}, "title"),
    ({"summary": ["a"]}, "summary"),
    ({"narrative": 1}, "narrative"),
    ({"tags": "a,b"}, "tags"),
    ({"tags": [1]}, "tags.0"),
    ({"quotes": {}}, "quotes"),
    ({"temporal": "yesterday"}, "temporal"),
    ({"temporal": {"mentionedAt": 5}}, "temporal.mentionedAt"),
    ({"temporal": {"participants": "Anna"}}, "temporal.participants"),
    ({"temporal": {"eventType": 1}}, "temporal.eventType"),
    ({"temporal": {"precision": False}}, "temporal.precision"),
    ({"scope": "world"}, "scope"),
    ({"criticality": 1}, "criticality"),
    ({"confidence": "high"}, "confidence"),
    ({"confidence": True}, "confidence"),
]


@pytest.mark.parametrize(("fields", "where"), WRONG_TYPES)
def test_a_top_level_field_of_the_wrong_type_is_named(fields: dict[str, Any], where: str) -> None:
    with pytest.raises(InvalidInput, match=rf"^invalid import: {where}(\.|:)"):
        parse_external(json.dumps({"candidates": [one()], **fields}))


@pytest.mark.parametrize(("fields", "where"), WRONG_CANDIDATE_FIELDS)
def test_a_candidate_field_of_the_wrong_type_is_named_with_its_index(
    fields: dict[str, Any], where: str
) -> None:
    text = document(one(), candidate("dropped", ""), one(**fields))
    with pytest.raises(
        InvalidInput, match=rf"^invalid import: candidates\.2\.{where}(\.|:)"
    ) as raised:
        parse_external(text)
    assert "\n" not in str(raised.value)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (document(*[one()] * 201), "201 candidates; at most 200"),
        ("PK\x03\x04\x14\x00\x00\x00", "looks binary"),
        ("\x1f\x8b\x08\x00gzip", "looks binary"),
        ('{"candidates": [{"title": "a\x00", "summary": "b"}]}', "looks binary"),
        ("[" * 50 + "]" * 50, "nested deeper"),
        ('{"a":' * 20 + "1" + "}" * 20, "nested deeper"),
        ("[" * 100_000 + "]" * 100_000, "nested deeper"),
        (" " * (4 * 1024 * 1024 + 1), "larger than 4 MB"),
        ("   \n ", "empty"),
        ("[1, 2]", "must be a JSON object"),
    ],
)
def test_what_no_reader_accepts_is_one_clear_line(text: str, problem: str) -> None:
    with pytest.raises(InvalidInput, match=problem) as raised:
        parse_external(text)
    assert "\n" not in str(raised.value) and not isinstance(raised.value, NotJson)


def test_text_that_is_not_json_is_left_for_recovery_unless_it_is_a_list() -> None:
    with pytest.raises(NotJson):
        parse_external("- likes hiking")
    assert to_document("Likes hiking. Has a dog.").document is None  # prose: recovery
    listed = to_document("# Saved memories\n- Likes hiking\n- Has a dog\nNotes follow\n")
    assert listed.fmt == "lines" and listed.document is not None
    assert sorted(c.summary for c in listed.document.candidates) == [
        "Has a dog",
        "Likes hiking",
        "Notes follow",
    ]
    assert to_document("One line of prose.\n- a bullet\nMore prose here.").document is None
    with pytest.raises(NotJson):  # asked for v2 explicitly, broken JSON is an error
        to_document('{"candidates": [', "v2")


def test_the_line_reader_takes_bullets_and_numbered_lists() -> None:
    text = (
        "# Memories\n\n- Likes hiking\n  in the Alps\n* Has a dog named Rex\n"
        "1. Prefers tea\n- [x] Speaks French\n```\n"
    )
    found = recover_offline(text).candidates  # in §11.1's category order
    assert sorted(c.summary for c in found) == [
        "Has a dog named Rex",
        "Likes hiking in the Alps",
        "Prefers tea",
        "Speaks French",
    ]


def test_offline_recovery_reads_the_pairs_of_broken_json() -> None:
    broken = '{"candidates": [{"title": "Tea", "summary": "Prefers \\"green\\" tea"}, {"title": "Do'
    assert [(c.title, c.summary) for c in recover_offline(broken).candidates] == [
        ("Tea", 'Prefers "green" tea')
    ]


def spoiled_documents() -> st.SearchStrategy[Any]:
    """Valid-looking documents with any field replaced by any JSON value."""
    base = {
        "schemaVersion": "stratagate.external-memory.v2",
        "candidates": [one(tags=["a"], temporal={"mentionedAt": "2024"})],
    }
    paths = [
        ("schemaVersion",),
        ("candidates",),
        ("coverage",),
        ("candidates", 0),
        ("candidates", 0, "title"),
        ("candidates", 0, "tags"),
        ("candidates", 0, "temporal"),
        ("candidates", 0, "temporal", "mentionedAt"),
        ("candidates", 0, "confidence"),
        ("candidates", 0, "scope"),
    ]

    def spoil(path: tuple[Any, ...], value: Any) -> Any:
        data = json.loads(json.dumps(base))
        target = data
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
        return data

    return st.builds(spoil, st.sampled_from(paths), json_values())


@settings(max_examples=2000, deadline=None, derandomize=True)
@given(
    st.one_of(
        spoiled_documents().map(json.dumps),
        json_values().map(json.dumps),
        texts(),
        st.binary(max_size=40).map(lambda b: b.decode("latin-1")),
        st.text(alphabet='{}[]":,0123456789abc \n`', max_size=60),
    )
)
def test_parse_external_raises_only_invalid_input(text: str) -> None:
    try:
        parsed = parse_external(text)
    except InvalidInput as error:
        assert str(error) and "\n" not in str(error)
        return
    assert all(c.title and c.summary for c in parsed.candidates)


def test_our_own_export_and_other_systems_files_take_up_to_2000_candidates() -> None:
    ours = document(*[one(title=f"Fact {i}") for i in range(500)], sourceSystem="stratagate")
    assert len(parse_external(ours).candidates) == 500
    with pytest.raises(InvalidInput, match="2001 candidates; at most 2000"):
        parse_external(document(*[one()] * 2001, sourceSystem="stratagate"))
    pasted = "\n".join(f"- Saved memory number {i}" for i in range(600))
    parsed = to_document(pasted, "lines").document
    assert parsed is not None and len(parsed.candidates) == 600
    assert to_document(pasted).fmt == "lines"  # auto: a bulleted list is read as one
    prose = " ".join(f"Saved memory number {i}." for i in range(600))
    assert to_document(prose).document is None  # prose goes to recovery, which keeps 200
    assert len(recover_offline(prose).candidates) == 200
    assert "first 200 of 600" in (recover_offline(prose).coverage_note or "")
