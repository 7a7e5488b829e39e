"""Sources everywhere in the graph's outputs (issue 26): each fact, edge and alias carries the
events it comes from in ``stratagate graph`` (text and ``--json``) and in the agent's graph
tools, and a forgotten event is never shown as a source."""

import asyncio
import html
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from stratagate_plugin.cli.main import main
from stratagate_plugin.core.events.documents import EVENT_RULES
from stratagate_plugin.core.memory import StrataGate
from stratagate_plugin.core.profile.spaces import space_for
from stratagate_plugin.core.store import event_rows, graph_jobs
from stratagate_plugin.core.store.turns import NewSpaceDefaults, ensure_space
from stratagate_plugin.harness.sessions import open_session
from stratagate_plugin.harness.types import ToolCallContext
from tests.graph_world import NS, card_for, fact, node, open_scripted
from tests.test_plugin_e2e import make_host
from tests.test_web_graph import HX, told
from tests.webapp import web_app

SAID = (
    ("Ana lives in Porto", "2024-01-01T00:00:00+00:00"),
    ("Everyone calls Ana 'Annie'", "2024-02-01T00:00:00+00:00"),
    ("Ana moved to Lisbon", "2024-03-01T00:00:00+00:00"),
    ("Ana works as a nurse", "2024-04-01T00:00:00+00:00"),
)


async def add_in(memory: StrataGate, space: str, *cards: Any) -> list[str]:
    """``graph_world.add_events`` into any space (the tools read the session's own)."""
    moved = [card.model_copy(update={"namespace": space}) for card in cards]

    def unit(raw: sqlite3.Connection) -> list[str]:
        ensure_space(raw, space, NewSpaceDefaults(3, 0.5), "2024-01-01T00:00:00+00:00")
        for card in moved:
            event_rows.insert_event(raw, card, EVENT_RULES)
        ids = [card.id for card in moved]
        graph_jobs.queue_events(raw, space, ids, 1000, "2024-01-01T00:00:00+00:00")
        return ids

    return await memory.db.write(unit)


async def seed(db: Path, space: str = NS) -> dict[str, str]:
    """Ana: a fact and an edge from one event each, an alias from another; a move makes
    the first edge history. Returns the event ids by what they say."""
    memory, model = await open_scripted(db)
    lives, called, moved, nurse = await add_in(memory, space, *(card_for(*s) for s in SAID))
    model.push(
        {
            "nodes": [
                node(
                    "a",
                    "Ana",
                    [lives, called, nurse],
                    aliases=["Annie"],
                    alias_sources={"Annie": [called]},
                    facts=[fact("role", "nurse", [nurse])],
                ),
                node("p", "Porto", [lives], "place"),
            ],
            "edges": [
                {
                    "from_ref": "a",
                    "to_ref": "p",
                    "relation": "lives_in",
                    "source_event_ids": [lives],
                }
            ],
        }
    )
    await memory.derivation.process_pending()
    [later] = await add_in(memory, space, card_for("Ana lives in Lisbon now", SAID[2][1]))
    model.push(
        {
            "nodes": [node("a", "Ana", [later]), node("l", "Lisbon", [later], "place")],
            "edges": [
                {
                    "from_ref": "a",
                    "to_ref": "l",
                    "relation": "lives_in",
                    "source_event_ids": [later],
                }
            ],
        }
    )
    await memory.derivation.process_pending()
    await memory.close()
    return {"lives": lives, "called": called, "moved": later, "nurse": nurse, "unused": moved}


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    return code, capsys.readouterr().out


def ana_card(cards: list[dict[str, Any]]) -> dict[str, Any]:
    [card] = [card for card in cards if card["name"] == "Ana"]
    return card


def assert_sourced(card: dict[str, Any], ids: dict[str, str]) -> None:
    """Ana's fact, both edges (current and history) and her alias name their own events."""
    [role] = card["facts"]
    assert (role["key"], role["sourceEventIds"]) == ("role", [ids["nurse"]])
    [now] = card["currentRelations"]
    assert (now["relation"], now["sourceEventIds"]) == ("-> lives_in Lisbon", [ids["moved"]])
    [was] = card["historicalRelations"]
    assert (was["relation"], was["sourceEventIds"]) == ("-> lives_in Porto", [ids["lives"]])
    aliases = card["metadataProvenance"]["aliases"]  # spec §4's shape
    assert aliases == [{"value": "Annie", "sourceEventIds": [ids["called"]]}]


def test_graph_json_gives_each_fact_edge_and_alias_its_sources(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "m.db"
    ids = asyncio.run(seed(db))
    where = ("--db", str(db), "--space", NS, "--json")
    code, out = run(capsys, "graph", *where)
    assert code == 0
    card = ana_card(json.loads(out))
    assert_sourced(card, ids)
    titles = {event["id"]: event["title"] for event in card["sourceEvents"]}
    assert titles[ids["called"]] == "Everyone calls Ana 'Annie'"
    assert ids["unused"] not in titles  # only what the card cites
    code, out = run(capsys, "graph", "Annie", *where)  # found by search: the same shape
    assert code == 0
    assert_sourced(ana_card(json.loads(out)), ids)


def test_graph_text_names_the_events_behind_each_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "m.db"
    ids = asyncio.run(seed(db))
    code, out = run(capsys, "graph", "Ana", "--db", str(db), "--space", NS)
    lines = out.splitlines()
    assert code == 0 and lines[0].startswith("Ana [person]")
    assert lines[1] == f"  also: Annie [{ids['called']}]"
    line = {text.split("  (")[0].strip(): text for text in lines[1:]}
    assert line["role: nurse"].endswith(f"[{ids['nurse']}]")
    assert line["-> lives_in Lisbon"].endswith(f"[{ids['moved']}]")
    assert line["was -> lives_in Porto"].endswith(f"[{ids['lives']}]")


def test_a_forgotten_event_is_no_longer_a_listed_source(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "m.db"
    ids = asyncio.run(seed(db))

    async def forget() -> None:
        async with await StrataGate.open(db) as memory:
            await memory.curation.act("forget", ids["lives"])

    asyncio.run(forget())
    code, out = run(capsys, "graph", "--db", str(db), "--space", NS, "--json")
    shown = json.dumps(ana_card(json.loads(out)))
    assert code == 0 and ids["lives"] not in shown and ids["moved"] in shown


async def test_the_graph_tools_carry_the_sources_and_their_quoted_messages(
    tmp_path: Path,
) -> None:
    db = tmp_path / "m.db"
    space = space_for("project", cwd=str(tmp_path), session_id="s1")
    ids = await seed(db, space)
    async with make_host(db, tmp_path) as host:
        call = ToolCallContext(session=open_session("s1", "t", tmp_path), turn=1, call_id="c1")
        searched = await host.tools["memory_search_graph"].implementation({"query": "Ana"}, call)
        assert_sourced(ana_card(searched["results"]), ids)
        node_id = ana_card(searched["results"])["id"]
        expanded = await host.tools["memory_expand_graph_node"].implementation(
            {"id": node_id}, call
        )
        card = expanded["results"]
        assert_sourced(card, ids)
        events = {event["id"]: event for event in card["sourceEvents"]}
        assert set(events) >= {ids["nurse"], ids["moved"], ids["lives"], ids["called"]}
        assert events[ids["nurse"]]["title"] == "Ana works as a nurse"


async def test_the_graph_page_links_each_fact_and_edge_to_its_events(tmp_path: Path) -> None:
    async with web_app(tmp_path) as (_, host, client):
        memory, space = await told(host, client)
        views = {v.node.name: v for v in await memory.graph.nodes(space)}
        data = (await client.get("/memory/graph.json", params={"space": space})).json()
        by_edge = {e.edge.id: e.edge for v in views.values() for e in v.current_edges}
        assert data["edges"]
        for edge in data["edges"]:
            assert edge["sourceEventIds"] == list(by_edge[edge["id"]].source_event_ids) != []
        caroline = views["Caroline"]
        url = f"/memory/graph/nodes/{caroline.node.id}"
        fragment = (await client.get(url, params={"space": space}, headers=HX)).text
        cited = [("fact", i) for f in caroline.current_facts for i in f.source_event_ids]
        cited += [("edge", i) for e in caroline.current_edges for i in e.edge.source_event_ids]
        assert cited
        for kind, event_id in cited:
            assert f'class="{kind}-source mono" href="/memory/events/{event_id}?' in fragment
        [first] = await memory.graph.source_events(caroline, 1)
        assert f'<span class="source-title">{html.escape(first.title)}</span>' in fragment
