"""The graph page: people told about in the web chat become nodes the page lists and
``graph.json`` draws with the edges among them; a node opens to its facts, edges and source
events; as-of, filters, 400/404, escaping and the Chinese page; through the real app."""

import html
import re
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import httpx

from tests.test_web_blocks import derive, runtime_of
from tests.webapp import memory_of, new_chat, say, web_app

HX = {"hx-request": "true"}
TOLD = (
    "Caroline: I live in Paris and I love painting landscapes.",
    "Melanie: I work at Google as an engineer.",
)


async def told(host: Any, client: httpx.AsyncClient) -> tuple[Any, str]:
    """Two web-chat turns (one block each), derived by the plugin's worker."""
    memory, space = memory_of(host), runtime_of(host).default_space()
    await memory.spaces.set_block_turn_size(space, 1)
    sid = await new_chat(client)
    for text in TOLD:
        assert (await say(client, sid, text)).status_code < 400
    await derive(host)
    await derive(host)  # the graph step follows the events' extraction
    return memory, space


def listed(page: str) -> dict[str, str]:
    """The node list: name → node id."""
    found = re.findall(
        r'href="/memory/graph/nodes/([^"?]+)\?[^"]*" hx-get="[^"]*"[^>]*>([^<]*)</a>', page
    )
    return {html.unescape(name): unquote(node_id) for node_id, name in found}


async def test_the_page_lists_people_and_the_json_draws_them_with_their_edges(
    tmp_path: Path,
) -> None:
    async with web_app(tmp_path) as (_, host, client):
        memory, space = await told(host, client)
        page = await client.get("/memory/graph", params={"space": space})
        assert page.status_code == 200
        assert 'aria-current="page">Graph</a>' in page.text
        assert 'src="/static/cytoscape-3.34.4.min.js"' in page.text and 'id="graph"' in page.text
        nodes = listed(page.text)
        views = {v.node.name: v for v in await memory.graph.nodes(space)}
        assert {"Caroline", "Melanie", "Paris", "Google"} <= set(nodes)
        assert nodes == {name: view.node.id for name, view in views.items()}

        people = listed(
            (await client.get("/memory/graph", params={"space": space, "type": "person"})).text
        )
        assert {"Caroline", "Melanie"} <= set(people) and "Paris" not in people

        data = (await client.get("/memory/graph.json", params={"space": space})).json()
        by_id = {n["id"]: n for n in data["nodes"]}
        assert {n["label"] for n in data["nodes"]} == set(views)
        assert by_id[nodes["Caroline"]] == {
            "id": nodes["Caroline"],
            "label": "Caroline",
            "type": "person",
            "sources": 1,
        }
        relations = {
            (by_id[e["source"]]["label"], e["label"], by_id[e["target"]]["label"])
            for e in data["edges"]
        }
        assert {("Caroline", "lives_in", "Paris"), ("Melanie", "works_at", "Google")} <= relations
        assert all(e["current"] for e in data["edges"])
        assert all(e["source"] in by_id and e["target"] in by_id for e in data["edges"])


async def test_a_node_shows_its_facts_edges_and_links_its_source_events(tmp_path: Path) -> None:
    async with web_app(tmp_path) as (_, host, client):
        memory, space = await told(host, client)
        [caroline] = [v for v in await memory.graph.nodes(space) if v.node.name == "Caroline"]
        url = f"/memory/graph/nodes/{caroline.node.id}"
        fragment = (await client.get(url, params={"space": space}, headers=HX)).text
        assert "<html" not in fragment and "Caroline" in fragment
        assert len(caroline.current_facts) == 1  # where she lives (a remark is no fact)
        for fact in caroline.current_facts:
            assert f"<code>{html.escape(fact.key)}</code>" in fragment
            assert html.escape(str(fact.value)) in fragment
        assert "lives_in" in fragment and ">Paris</a>" in fragment
        linked = re.findall(r'<li><a [^>]*href="/memory/events/([^"?]+)\?space=', fragment)
        assert linked == list(caroline.source_event_ids)  # the node's list (facts cite theirs)
        event = await client.get(f"/memory/events/{linked[0]}", params={"space": space})
        assert event.status_code == 200
        whole = (await client.get(url, params={"space": space})).text
        assert "<html" in whole and "Back to the graph" in whole

        [paris] = [v for v in await memory.graph.nodes(space) if v.node.name == "Paris"]
        other = (await client.get(f"/memory/graph/nodes/{paris.node.id}", headers=HX)).text
        assert "Caroline</a> <code>lives_in</code> → Paris" in other  # the edge coming in


async def test_as_of_before_anything_bad_parameters_and_unknown_nodes(tmp_path: Path) -> None:
    async with web_app(tmp_path) as (_, host, client):
        memory, space = await told(host, client)
        early = {"space": space, "as_of": "2000-01-01"}
        page = (await client.get("/memory/graph", params=early)).text
        assert listed(page) == {} and "No node was known as of this date." in page
        assert 'id="graph"' not in page
        assert (await client.get("/memory/graph.json", params=early)).json() == {
            "nodes": [],
            "edges": [],
        }
        for bad in ({"as_of": "yesterday"}, {"type": "plant"}, {"offset": "x"}, {"history": "2"}):
            for path in ("/memory/graph", "/memory/graph.json"):
                assert (await client.get(path, params={"space": space, **bad})).status_code == 400
        assert (await client.get("/memory/graph/nodes/node_nope")).status_code == 404
        [view, *_] = await memory.graph.nodes(space)
        bad_date = await client.get(f"/memory/graph/nodes/{view.node.id}", params={"as_of": "soon"})
        assert bad_date.status_code == 400


async def test_an_empty_space_says_so_without_a_canvas(tmp_path: Path) -> None:
    async with web_app(tmp_path) as (_, _host, client):
        page = (await client.get("/memory/graph")).text
        assert "This space has no graph nodes yet" in page and 'id="graph"' not in page


async def test_names_are_escaped_and_the_chinese_page_has_chinese_labels(tmp_path: Path) -> None:
    async with web_app(tmp_path) as (_, host, client):
        memory, space = await told(host, client)
        [caroline] = [v for v in await memory.graph.nodes(space) if v.node.name == "Caroline"]
        evil = "<script>alert(1)</script>"
        await memory.db.write(
            lambda raw: raw.execute(
                "UPDATE graph_nodes SET name = ? WHERE id = ?", (evil, caroline.node.id)
            )
        )
        page = (await client.get("/memory/graph", params={"space": space})).text
        assert evil not in page and html.escape(evil) in page
        detail = (await client.get(f"/memory/graph/nodes/{caroline.node.id}")).text
        assert evil not in detail and html.escape(evil) in detail
        data = (await client.get("/memory/graph.json", params={"space": space})).json()
        assert evil in {n["label"] for n in data["nodes"]}  # JSON: the canvas draws text

        zh = (await client.get("/memory/graph", params={"space": space, "lang": "zh"})).text
        assert 'aria-current="page">知识图谱</a>' in zh and "人物" in zh and "再显示" not in zh
        node_zh = (await client.get(f"/memory/graph/nodes/{caroline.node.id}?lang=zh")).text
        assert "当前事实" in node_zh and "来源事件" in node_zh


async def test_a_node_links_each_alias_to_the_events_that_gave_it(tmp_path: Path) -> None:
    async with web_app(tmp_path) as (_, host, client):
        memory, space = memory_of(host), runtime_of(host).default_space()
        await memory.spaces.set_block_turn_size(space, 1)
        sid = await new_chat(client)
        assert (
            await say(client, sid, "Caroline: Call me Caro. I live in Paris.")
        ).status_code < 400
        await derive(host)
        await derive(host)
        [caroline] = [v for v in await memory.graph.nodes(space) if v.node.name == "Caroline"]
        detail = await memory.graph.node(caroline.node.id)
        assert detail.alias_sources.get("Caro")
        fragment = (await client.get(f"/memory/graph/nodes/{caroline.node.id}", headers=HX)).text
        [event_id] = detail.alias_sources["Caro"]
        assert re.search(
            rf'Caro <span class="muted">\(from <a class="field-source mono" '
            rf'href="/memory/events/{event_id}\?space=',
            fragment,
        )


async def test_the_list_and_the_canvas_read_only_what_they_show(tmp_path: Path) -> None:
    """The page's list reads nodes alone and the canvas nodes and the edges among them:
    the same nodes and importance as the whole views (the stored count, no sources read),
    the whole views' edges with both ends listed, no facts read."""
    async with web_app(tmp_path) as (_, host, client):
        memory, space = await told(host, client)
        whole = await memory.graph.nodes(space)
        assert any(view.current_facts for view in whole)
        assert any(view.current_edges for view in whole)
        listed = {view.node.id for view in whole}
        assert [v.importance for v in whole] == [len(v.source_event_ids) for v in whole]
        for parts in ("nodes", "edges"):
            views = await memory.graph.nodes(space, parts=parts)
            assert [
                (v.node.model_copy(update={"source_event_ids": ()}), v.importance) for v in whole
            ] == [(v.node, v.importance) for v in views]
            assert not any(
                v.current_facts or v.historical_facts or v.source_event_ids for v in views
            )
            edges = [(v.current_edges, v.historical_edges) for v in views]
            kept = [
                tuple(
                    tuple(e for e in side if e.other_id in listed)
                    for side in (v.current_edges, v.historical_edges)
                )
                for v in whole
            ]
            assert edges == (kept if parts == "edges" else [((), ())] * len(whole))
            if parts == "edges":
                assert any(v.current_edges for v in views)
