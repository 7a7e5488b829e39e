"""Each importer's sample converts to the candidates it holds, and each sample is detected.

The samples under tests/samples/import/ are small files written for these tests in each
source's real shape (docs/import-formats.md names the source files the shapes come from).
"""

import json
from pathlib import Path
from typing import Any

import pytest

from stratagate_plugin.core.errors import InvalidInput
from stratagate_plugin.core.importer.formats import (
    FORMAT_NAMES,
    convert,
    detect_format,
    recover,
)
from stratagate_plugin.core.importer.formats.prompts import (
    EXAMPLE_JSON,
    EXPORT_PROMPT_EN,
    EXPORT_PROMPT_ZH,
)

SAMPLES = Path(__file__).parent / "samples" / "import"
ORDER = ["instruction", "identity", "career", "project", "preference"]


def sample(name: str) -> str:
    return (SAMPLES / name).read_text("utf-8")


def rows(document: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(category, title, summary) of each candidate, in document order."""
    return [(c["category"], c["title"], c["summary"]) for c in document["candidates"]]


def assert_v2_shape(document: dict[str, Any]) -> None:
    """What every converter promises: the v2 top level, no nulls, tags led by the category,
    the source's own order (not re-sorted by category: issue 27)."""
    assert document["schemaVersion"] == "stratagate.external-memory.v2"
    assert document["sourceType"] == "external_ai_memory_export"
    assert document["coverage"] in ("full", "partial", "limited")
    assert "null" not in json.dumps(document)
    assert all(c["category"] in ORDER for c in document["candidates"])
    for item in document["candidates"]:
        assert item["tags"][0] == item["category"]
        assert item["scope"] in ("user", "project")
        assert 0 <= item["confidence"] <= 1
        assert item["memoryKind"] in ("instruction", "preference", "fact")
        assert len(item["title"]) <= 80 and item["summary"]


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("chatgpt-memories.txt", "lines"),
        ("claude-memory.md", "lines"),
        ("mem0-get-all.json", "mem0"),
        ("openmemory-memories.json", "mem0"),
        ("openmemory-memories.jsonl", "mem0"),
        ("mcp-memory.jsonl", "mcp-memory"),
        ("letta-agent.af", "letta"),
        ("export-v2.json", "v2"),
        ("export-v2-fenced.md", "v2"),
    ],
)
def test_detect_format_names_each_sample(name: str, expected: str) -> None:
    assert detect_format(sample(name)) == expected
    assert expected in FORMAT_NAMES


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('[{"id": "1", "memory": "Likes tea"}]', "mem0"),
        ('{"type": "entity", "name": "a", "entityType": "t", "observations": []}', "mcp-memory"),
        ('{"entities": [], "relations": []}', "mcp-memory"),
        ('["Likes tea", "Lives in Lisbon"]', "lines"),
        ('{"events": []}', "v2"),
        ('{"candidates": [{"title": "cut off', "v2"),
        ('{"something": "else"}', "v2"),
        ("Likes tea\nLives in Lisbon", "lines"),
        ("", "lines"),
        (json.dumps(json.dumps({"agents": [], "blocks": []})), "letta"),
        ('{"core_memory": []}', "letta"),
        ('{"type":"entity","name":"a","entityType":"t","observations":[]}\nnot json', "mcp-memory"),
    ],
)
def test_detect_format_by_shape(text: str, expected: str) -> None:
    assert detect_format(text) == expected


def test_chatgpt_list_one_candidate_per_bullet() -> None:
    document = convert(sample("chatgpt-memories.txt"), "lines")
    assert_v2_shape(document)
    assert document["sourceSystem"] == "unknown"
    assert document["coverage"] == "full"
    assert rows(document) == [
        ("identity", "User's name is Dana Whitfield", "User's name is Dana Whitfield."),
        (
            "career",
            "Is a backend engineer at a logistics startup",
            "Is a backend engineer at a logistics startup.",
        ),
        (
            "preference",
            "Prefers concise answers with code first, explanation after",
            "Prefers concise answers with code first, explanation after.",
        ),
        (
            "project",
            "Is migrating the billing service from Python to Rust",
            "Is migrating the billing service from Python to Rust.",
        ),
        ("instruction", "Always answer in British English", "Always answer in British English."),
        ("identity", "Has a dog named Biscuit", "Has a dog named Biscuit."),
    ]
    assert all("temporal" not in item for item in document["candidates"])


def test_claude_memory_headings_and_prose_sentences() -> None:
    document = convert(sample("claude-memory.md"), "lines")
    assert_v2_shape(document)
    assert [summary for _, _, summary in rows(document)] == [
        "Dana is a backend engineer at a logistics startup.",
        "She leads the billing team.",
        "Dana lives with her dog Biscuit.",
        "She enjoys bouldering on weekends.",
        "Migrating the billing service to Rust before the March release.",
    ]
    by_summary = {summary: category for category, _, summary in rows(document)}
    assert by_summary["She leads the billing team."] == "career"  # under "Work context"
    assert by_summary["She enjoys bouldering on weekends."] == "preference"
    assert document["coverage"] == "partial"
    assert "lines without a value (1)" in document["coverageNote"]  # "Age: ?"


def test_mem0_get_all_results_with_times_in_utc() -> None:
    document = convert(sample("mem0-get-all.json"), "mem0")
    assert_v2_shape(document)
    assert document["sourceSystem"] == "mem0"
    by_summary = {item["summary"]: item for item in document["candidates"]}
    vegetarian = by_summary["Is vegetarian and avoids dairy"]
    assert vegetarian["category"] == "preference"  # mem0's own category "food"
    assert vegetarian["tags"] == ["preference", "food", "health"]
    assert vegetarian["temporal"] == {"mentionedAt": "2024-07-21T16:30:00.654321+00:00"}
    engineer = by_summary["Works as a backend engineer"]
    assert engineer["category"] == "career"
    assert engineer["temporal"] == {"mentionedAt": "2024-07-22T17:00:00+00:00"}  # created_at
    assert by_summary["Name is Dana"]["category"] == "identity"
    relation = by_summary["dana owns biscuit"]
    assert "temporal" not in relation and "relation" in relation["tags"]
    assert document["coverage"] == "full"


def test_mem0_bare_list_form() -> None:
    items = [{"id": "1", "memory": "Prefers tea over coffee", "created_at": "2024-01-02T03:04:05Z"}]
    document = convert(json.dumps(items), "mem0")
    assert rows(document) == [("preference", "Prefers tea over coffee", "Prefers tea over coffee")]
    assert document["candidates"][0]["temporal"] == {"mentionedAt": "2024-01-02T03:04:05+00:00"}


def test_openmemory_export_skips_deleted_and_names_categories() -> None:
    document = convert(sample("openmemory-memories.json"), "mem0")
    assert_v2_shape(document)
    assert document["sourceSystem"] == "openmemory"
    assert document["exportedAt"] == "2025-03-06T08:00:00+00:00"
    assert rows(document) == [
        ("preference", "Uses tabs, not spaces, in Go code", "Uses tabs, not spaces, in Go code"),
        (
            "career",
            "Maintains the billing service at a logistics startup",
            "Maintains the billing service at a logistics startup",
        ),
    ]
    assert document["candidates"][1]["tags"] == ["career", "work"]
    assert document["candidates"][1]["temporal"] == {"mentionedAt": "2025-03-04T11:00:00+00:00"}
    assert "Likes Vim keybindings" not in json.dumps(document)  # state "deleted"
    assert document["coverage"] == "partial" and "deleted memories (1)" in document["coverageNote"]


def test_openmemory_jsonl_matches_the_json_export() -> None:
    from_lines = convert(sample("openmemory-memories.jsonl"), "mem0")
    from_json = convert(sample("openmemory-memories.json"), "mem0")
    assert from_lines["candidates"] == from_json["candidates"]
    assert from_lines["sourceSystem"] == "openmemory"


def test_mcp_memory_observations_and_relations() -> None:
    document = convert(sample("mcp-memory.jsonl"), "mcp-memory")
    assert_v2_shape(document)
    assert document["sourceSystem"] == "mcp-memory"
    assert rows(document) == [
        (
            "preference",
            "default_user: Prefers dark mode in every editor",
            "default_user (person): Prefers dark mode in every editor",
        ),
        (
            "identity",
            "default_user: Speaks Portuguese and English",
            "default_user (person): Speaks Portuguese and English",
        ),
        (
            "project",
            "Harbor: Harbor is a container registry mirror written in Go",
            "Harbor (project): Harbor is a container registry mirror written in Go",
        ),
        (
            "career",
            "default_user works_at Northwind Logistics",
            "default_user works_at Northwind Logistics",
        ),
        ("project", "default_user maintains Harbor", "default_user maintains Harbor"),
    ]
    assert document["candidates"][1]["tags"] == ["identity", "person", "default_user"]
    assert "entities without observations (1)" in document["coverageNote"]
    assert all("temporal" not in item for item in document["candidates"])


def test_mcp_read_graph_answer_is_the_same_graph() -> None:
    lines = [json.loads(line) for line in sample("mcp-memory.jsonl").splitlines()]
    graph = {
        "entities": [{k: v for k, v in r.items() if k != "type"} for r in lines[:3]],
        "relations": [{k: v for k, v in r.items() if k != "type"} for r in lines[3:]],
    }
    assert detect_format(json.dumps(graph)) == "mcp-memory"
    assert rows(convert(json.dumps(graph), "mcp-memory")) == rows(
        convert(sample("mcp-memory.jsonl"), "mcp-memory")
    )


def test_letta_human_block_lines_persona_left_out() -> None:
    document = convert(sample("letta-agent.af"), "letta")
    assert_v2_shape(document)
    assert document["sourceSystem"] == "letta"
    assert document["exportedAt"] == "2025-05-10T09:30:00+00:00"
    assert rows(document) == [
        ("identity", "First name: Dana", "First name: Dana"),
        (
            "career",
            "Occupation: Backend engineer at a logistics startup",
            "Occupation: Backend engineer at a logistics startup",
        ),
        (
            "preference",
            "Interests: Bouldering, sourdough baking",
            "Interests: Bouldering, sourdough baking",
        ),
        ("identity", "She has a dog called Biscuit", "She has a dog called Biscuit."),
        ("identity", "She lives in Lisbon", "She lives in Lisbon."),
        (
            "instruction",
            "Always show the tests before the implementation",
            "Always show the tests before the implementation.",
        ),
        (
            "instruction",
            "Never use emoji in commit messages",
            "Never use emoji in commit messages.",
        ),
    ]
    text = json.dumps(document)
    assert "Sage" not in text and "calm and precise" not in text  # the persona block
    assert "Last name" not in text and "what I know so far" not in text
    assert "persona blocks" in document["coverageNote"]
    assert document["candidates"][5]["tags"] == ["instruction", "coding_guidelines"]


def test_letta_older_core_memory_schema_and_json_string_wrapper() -> None:
    agent = {
        "name": "helper",
        "core_memory": [
            {
                "label": "human",
                "value": "Name: Ana\nPrefers Portuguese in the evenings.",
                "limit": 2000,
                "created_at": "2025-01-01T09:00:00",
                "updated_at": "2025-01-02T09:00:00+01:00",
                "description": None,
                "is_template": False,
                "template_name": None,
            },
            {"label": "persona", "value": "I am Sam.", "limit": 2000},
        ],
    }
    for text in (json.dumps(agent), json.dumps(json.dumps(agent))):
        document = convert(text, "letta")
        assert rows(document) == [
            ("identity", "Name: Ana", "Name: Ana"),
            (
                "preference",
                "Prefers Portuguese in the evenings",
                "Prefers Portuguese in the evenings.",
            ),
        ]
        temporal = {"mentionedAt": "2025-01-02T08:00:00+00:00"}
        assert all(item["temporal"] == temporal for item in document["candidates"])


def test_recover_reads_title_summary_pairs_from_broken_json() -> None:
    broken = sample("export-v2.json")[:-40]  # cut off before the end
    with pytest.raises(json.JSONDecodeError):
        json.loads(broken)
    document = recover(broken)
    assert document["coverage"] == "limited"
    assert rows(document) == [
        (
            "instruction",
            "Answers in British English",
            "The user asked for every answer to be written in British English.",
        ),
        (
            "project",
            "Billing service moved to Rust",
            "The user's team finished moving the billing service from Python to Rust.",
        ),
    ]
    assert {item["confidence"] for item in document["candidates"]} == {0.5}


def test_recover_falls_back_to_bullets() -> None:
    document = recover("Sure! Here's what I know:\n\n* Likes green tea\n* Lives in Porto\n")
    assert [summary for _, _, summary in rows(document)] == ["Likes green tea", "Lives in Porto"]


@pytest.mark.parametrize(
    ("fmt", "text", "message"),
    [
        (
            "mcp-memory",
            '{"type":"entity","name":"a","entityType":"t","observations":[]}\n{oops',
            "line 2: not JSON",
        ),
        (
            "mcp-memory",
            '{"type":"entity","name":"","entityType":"t","observations":[]}',
            "name must be",
        ),
        (
            "mcp-memory",
            '{"type":"entity","name":"a","entityType":"t","observations":"x"}',
            "observations must be a list",
        ),
        ("mcp-memory", "[1]", 'expected an object with a "type"'),
        ("mem0", '{"results": [{"memory": 3}]}', "results[0].memory: expected"),
        ("mem0", '{"results": ["x"]}', "results[0]: expected an object"),
        ("mem0", '{"foo": 1}', "expected a list of memories"),
        ("mem0", '{"memory": "a"}\n{', "line 2: not JSON"),
        ("mem0", "[]", "holds no memories"),
        ("letta", "not json", "Letta agent file is not JSON"),
        ("letta", '{"agents": []}', "has no memory blocks"),
        ("letta", '{"blocks": [{"label": "human", "value": 5}]}', "blocks[0]: label and value"),
        ("letta", '{"blocks": "x"}', "blocks must be a list"),
        ("lines", "## Only a heading\n\n", "no memories found"),
        ("lines", '{"a": 1}', "this is JSON, not a plain list"),
        ("lines", "   ", "the import text is empty"),
        ("v2", "{}", "read by the v2 parser"),
        ("yaml", "a: b", "unknown import format 'yaml'"),
        ("letta", "[" * 200 + "]" * 200, "nested deeper than 100 levels"),
    ],
)
def test_bad_input_is_one_clear_line(fmt: str, text: str, message: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        convert(text, fmt)
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)


def test_unreadable_time_is_left_out_and_counted() -> None:
    items = [
        {"memory": "Likes tea", "created_at": "yesterday"},
        {"memory": "Ok", "updated_at": 9e99},
    ]
    document = convert(json.dumps(items), "mem0")
    assert all("temporal" not in item for item in document["candidates"])
    assert "unreadable times (2)" in document["coverageNote"]


def test_long_memory_is_cut_at_the_v2_limits() -> None:
    document = convert(json.dumps([{"memory": "word " * 1000}]), "mem0")
    item = document["candidates"][0]
    assert len(item["summary"]) <= 2000 and item["summary"].endswith("…")
    assert len(item["title"]) <= 80


def test_lone_surrogates_become_replacement_characters() -> None:
    document = convert('[{"memory": "Likes \\ud800 tea"}]', "mem0")
    assert document["candidates"][0]["summary"] == "Likes \ufffd tea"
    assert convert("- Likes \ud800", "lines")["candidates"][0]["summary"] == "Likes \ufffd"


def test_export_prompts_carry_the_rules_and_a_valid_example() -> None:
    example = json.loads(EXAMPLE_JSON)
    assert example["schemaVersion"] == "stratagate.external-memory.v2"
    assert "null" not in EXAMPLE_JSON
    assert [c["category"] for c in example["candidates"]] == ["instruction", "project"]
    for prompt in (EXPORT_PROMPT_EN, EXPORT_PROMPT_ZH):
        assert EXAMPLE_JSON in prompt
        assert "null" in prompt and "originalText" in prompt and '"unknown"' in prompt
        assert "instruction" in prompt and "preference" in prompt
    for rule in (
        "No guesses",
        "sensitive data",
        "One fact per candidate",
        "contradict",
        "Never guess a time",
    ):
        assert rule in EXPORT_PROMPT_EN
    for rule in ("不要猜测", "敏感信息", "只写一个事实", "互相矛盾", "绝不猜测时间"):
        assert rule in EXPORT_PROMPT_ZH


def test_fenced_export_with_prose_around_it_converts() -> None:
    fenced = "Here you go:\n\n```json\n" + sample("mem0-get-all.json") + "```\nAnything else?"
    assert detect_format(fenced) == "mem0"
    assert rows(convert(fenced, "mem0")) == rows(convert(sample("mem0-get-all.json"), "mem0"))
    listed = convert('["Likes tea", "  ", "Lives in Porto. Works at a bakery."]', "lines")
    assert [summary for _, _, summary in rows(listed)] == [
        "Likes tea",
        "Lives in Porto. Works at a bakery.",  # one string is one memory, as the source kept it
    ]


def test_mem0_paginated_answer_says_later_pages_are_missing() -> None:
    page = {"count": 250, "next": "https://api.mem0.ai/v2/memories/?page=2", "previous": None}
    page["results"] = [{"id": "1", "memory": "Lives in Porto"}]
    document = convert(json.dumps(page), "mem0")
    assert rows(document) == [("identity", "Lives in Porto", "Lives in Porto")]
    assert document["coverage"] == "partial" and "later pages" in document["coverageNote"]


def test_a_wrapped_bullet_is_one_memory_and_a_blank_line_ends_it() -> None:
    text = "- Likes hiking\n  in the Alps\n\n  Has a dog\n- [x] Speaks French\n```\n"
    summaries = sorted(c["summary"] for c in convert(text, "lines")["candidates"])
    assert summaries == ["Has a dog", "Likes hiking in the Alps", "Speaks French"]


def test_mcp_snake_case_relations_are_read_and_odd_lines_counted() -> None:
    """Issue 27: ``from_entity``/``to_entity`` refused the whole file; a line of no known
    shape is skipped and named in the coverage note."""
    text = sample("mcp-memory-snake-relations.jsonl")
    assert detect_format(text) == "mcp-memory"
    document = convert(text, "mcp-memory")
    assert_v2_shape(document)
    summaries = [summary for _, _, summary in rows(document)]
    assert "Mara Lindqvist works_at Oresund Maritime" in summaries
    assert "Mara Lindqvist maintains Tidewater" in summaries
    assert len(summaries) == 7
    assert document["coverage"] == "partial"
    assert "neither an entity nor a relation: 6 (1)" in document["coverageNote"]


def test_mcp_untyped_lines_by_shape_with_their_times() -> None:
    """Issue 27: lines without ``type`` went to text recovery as raw JSON."""
    text = sample("mcp-memory-untyped.jsonl")
    assert detect_format(text) == "mcp-memory"
    document = convert(text, "mcp-memory")
    assert_v2_shape(document)
    when = {c["summary"]: c.get("temporal", {}).get("mentionedAt") for c in document["candidates"]}
    assert when == {
        "Jonas Weber (person): Plays tennis on Saturday mornings": "2025-03-02T08:15:00+00:00",
        "Jonas Weber (person): Is vegetarian": "2025-03-02T08:15:00+00:00",
        "Kestrel (project): Kestrel is a static site generator in Python": (
            "2025-03-05T10:00:00+00:00"
        ),
        "Jonas Weber maintains Kestrel": "2025-03-05T10:01:00+00:00",
        "Jonas Weber (person): Moved to Leipzig": "2025-06-20T12:00:00+00:00",
    }
    assert "neither an entity nor a relation: 4 (1)" in document["coverageNote"]


def test_mcp_file_of_only_unknown_lines_is_one_clear_error() -> None:
    with pytest.raises(InvalidInput) as caught:
        convert('{"note": 1}\n{"other": 2}\n', "mcp-memory")
    assert "line 1" in str(caught.value) and "\n" not in str(caught.value)
