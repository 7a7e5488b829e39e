"""The embedded projector on small English and Chinese conversations, derived end to end;
the graph tools' batches and refs, recall's nodes within the budget, and the CLI."""

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from stratagate_plugin.cli.main import main
from stratagate_plugin.core.config import MemoryConfig
from stratagate_plugin.core.graph.shapes import GRAPH_PROVENANCE_LIMIT
from stratagate_plugin.core.memory import StrataGate
from stratagate_plugin.core.profile.spaces import space_for
from stratagate_plugin.core.retrieval.recall import RecallConfig
from stratagate_plugin.core.text.token_budget import estimate_tokens
from stratagate_plugin.harness.sessions import open_session
from stratagate_plugin.harness.types import ToolCallContext
from tests.test_plugin_e2e import make_host

ENGLISH = [
    (
        "Caroline: I live in Paris and I love painting landscapes.",
        "Melanie: I work at Google as an engineer.",
    ),
    (
        "Caroline: Last month I moved to Berlin for a new job.",
        "Melanie: I'm planning to visit Rome next week.",
    ),
    (
        "Caroline: I went to a support group yesterday.",
        "Melanie: I took my kids camping in Yosemite.",
    ),
]
CHINESE = [
    ("李雷: 我住在上海，我在腾讯工作。", "韩梅梅: 我下个月打算去北京旅游。"),
    ("李雷: 我上个月搬到了杭州。", "韩梅梅: 我喜欢画画。"),
]


async def converse(memory: StrataGate, space: str, turns: list[tuple[str, str]]) -> None:
    for i, (user, assistant) in enumerate(turns):
        await memory.blocks.append_turn(
            space, "old", user=user, assistant=assistant, receipt_id=f"{space}{i}"
        )
    await memory.blocks.seal_tail(space, "old")
    report = await memory.derivation.process_pending()
    assert report.graph_ran >= 1 and report.graph_failed == 0


def named(views: list[Any]) -> dict[str, Any]:
    return {view.node.name: view for view in views}


async def test_both_speakers_become_people_and_a_move_replaces_where_they_live(
    memory: StrataGate,
) -> None:
    await converse(memory, "en", ENGLISH)
    nodes = named(await memory.graph.nodes("en"))
    assert nodes["Caroline"].node.type == nodes["Melanie"].node.type == "person"
    caroline = nodes["Caroline"]
    assert [(e.edge.relation, e.other_name) for e in caroline.current_edges] == [
        ("lives_in", "Berlin"),
        ("knows", "Melanie"),  # the two speakers (issue 26)
    ]
    assert [e.other_name for e in caroline.historical_edges] == ["Paris"]
    assert [(e.edge.relation, e.other_name) for e in nodes["Melanie"].current_edges] == [
        ("works_at", "Google"),
        ("knows", "Caroline"),
    ]
    assert nodes["Google"].node.type == "organization" and nodes["Rome"].node.type == "place"
    melanie = {f.key: f.value for f in nodes["Melanie"].current_facts}
    assert melanie == {"works_at": "Google", "role": "engineer"}  # a plan is no attribute
    live = {e.id for e in await memory.events.cards("en") if e.status == "active"}
    for view in nodes.values():  # every current fact and edge has an active source
        for record in (*view.current_facts, *(e.edge for e in view.current_edges)):
            assert set(record.source_event_ids) & live
    for event in await memory.events.cards("en"):  # the nodes citing it are written back
        assert event.temporal.get("participant_node_ids")


async def test_chinese_speakers_and_phrasings(memory: StrataGate) -> None:
    await converse(memory, "zh", CHINESE)
    nodes = named(await memory.graph.nodes("zh"))
    assert nodes["李雷"].node.type == nodes["韩梅梅"].node.type == "person"
    li = nodes["李雷"]
    assert sorted((e.edge.relation, e.other_name) for e in li.current_edges) == [
        ("knows", "韩梅梅"),  # the two speakers (issue 26)
        ("lives_in", "杭州"),
        ("works_at", "腾讯"),
    ]
    assert [e.other_name for e in li.historical_edges] == ["上海"]
    [hit, *_] = await memory.graph.search("zh", "李雷住在哪里")
    assert hit.view.node.name == "李雷" and "杭州" in json.dumps(hit.compact(), ensure_ascii=False)


async def test_recall_adds_at_most_four_nodes_within_the_budget(memory: StrataGate) -> None:
    await converse(memory, "en", ENGLISH)
    context = await memory.retrieval.auto_context(
        "en", "new", "Where do Caroline and Melanie live and work?"
    )
    assert 1 <= len(context.nodes) <= 4 and context.nodes[0]["name"] in {"Caroline", "Melanie"}
    assert "KnowledgeGraph:" in context.text and estimate_tokens(context.text) <= 900
    tight = await memory.retrieval.auto_context(
        "en", "new", "Where does Caroline live?", config=RecallConfig(token_budget=200)
    )
    assert estimate_tokens(tight.text) <= 200
    assert len(tight.events) + len(tight.nodes) < len(context.events) + len(context.nodes)
    own = await memory.retrieval.auto_context("en", "old", "Where does Caroline live?")
    assert own.nodes == []  # all of it was said in this very thread


async def test_graph_tools_open_batches_whose_refs_assess_and_record(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    space = space_for("project", cwd=str(tmp_path), session_id="s1")
    async with await StrataGate.open(db, MemoryConfig(block_turn_size=3)) as memory:
        await converse(memory, space, ENGLISH)
    async with make_host(db, tmp_path) as host:
        call = ToolCallContext(session=open_session("s1", "t", tmp_path), turn=1, call_id="c1")
        searched = await host.tools["memory_search_graph"].implementation(
            {"query": "Caroline"}, call
        )
        first = searched["results"][0]
        assert (
            first["name"] == "Caroline" and len(first["sourceEventIds"]) <= GRAPH_PROVENANCE_LIMIT
        )
        assert searched["evidenceRefs"][0] == f"graph-node:{first['id']}" == first["ref"]
        expanded = await host.tools["memory_expand_graph_node"].implementation(
            {"id": first["id"]}, call
        )
        ref = f"graph-node:{first['id']}:expanded"
        assert expanded["evidenceRefs"] == (ref,) and expanded["results"]["historicalRelations"]
        judged = await host.tools["memory_assess"].implementation(
            {
                "verdict": "sufficient",
                "evidence_refs": [ref],
                "fit": "her city",
                "missing": "",
                "next_strategy": "answer",
                "batch_id": expanded["batchId"],
            },
            call,
        )
        assert judged["batch"]["assessment"]["evidence_refs"] == [ref]
        used = await host.tools["memory_record_use"].implementation(
            {"evidence_refs": [ref], "batch_id": expanded["batchId"]}, call
        )
        assert [(c["kind"], c["id"]) for c in used["citations"]] == [("graph", first["id"])]
        assert used["event_ids"] == [] and used["batch_status"] == "recorded"
        with pytest.raises(Exception, match="no graph node"):
            await host.tools["memory_expand_graph_node"].implementation({"id": "node_x"}, call)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_graph_shows_facts_sources_and_belief_as_of_a_date(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "m.db"

    async def seed() -> None:
        async with await StrataGate.open(db, MemoryConfig(block_turn_size=3)) as memory:
            await converse(memory, "en", ENGLISH)

    asyncio.run(seed())
    code, out, _ = run(capsys, "graph", "Caroline", "--db", str(db), "--space", "en")
    assert code == 0 and out.startswith("Caroline [person]")
    assert "-> lives_in Berlin" in out and "was -> lives_in Paris" in out and "sources: evt_" in out
    code, out, _ = run(
        capsys, "graph", "--db", str(db), "--space", "en", "--json", "--type", "place"
    )
    assert code == 0 and {card["type"] for card in json.loads(out)} == {"place"}
    code, out, _ = run(capsys, "graph", "--db", str(db), "--space", "en", "--as-of", "2000-01-01")
    assert (code, out.strip()) == (0, "(no graph nodes in memory space en as of 2000-01-01)")
    code, _, err = run(capsys, "graph", "--db", str(db), "--space", "en", "--as-of", "soon")
    assert code == 2 and "not a date" in err
