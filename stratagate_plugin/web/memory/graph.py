"""The graph page: the space's knowledge graph as a Cytoscape canvas and, for people
without it, a plain list of the same nodes; each node opens to its facts (current and
history) and its edges both ways, each with its validity and the events it comes from, and
the node's source events by title and quote.

The canvas reads ``/graph.json`` (the top 100 nodes by importance, then the next 100,
and the edges among them); the script is a static file, so the page keeps its CSP.
"""

from typing import Any
from urllib.parse import urlencode

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ...core.graph.shapes import NODE_TYPES, RecordParts, value_text
from ...core.graph.views import NodeView
from ..shell.templating import json_response
from .pages import SECTION_PATH, MemoryPages, int_param

PAGE = 100
MAX_SHOWN = 1000  # graph_nodes' own maximum: a canvas of more helps nobody
SOURCE_TITLES = 200  # cited events a node's panel names by title


def routes(pages: MemoryPages) -> list[Route]:
    return [
        pages.route("/graph", graph_page, methods=["GET"]),
        pages.route("/graph.json", graph_json, methods=["GET"]),
        pages.route("/graph/nodes/{node_id}", node_page, methods=["GET"]),
    ]


def filters(request: Request) -> dict[str, Any]:
    """The asked node type, ``as of`` date, history toggle and offset; bad ones are a 400
    (a bad date through the engine's ``InvalidInput``)."""
    params = request.query_params
    node_type = params.get("type", "").strip()
    if node_type and node_type not in NODE_TYPES:
        raise HTTPException(400, f"type must be one of {', '.join(NODE_TYPES)}")
    as_of = params.get("as_of", "").strip()[:40]
    return {
        "type": node_type,
        "as_of": as_of,
        "history": int_param(request, "history", 0, high=1),
        "offset": int_param(request, "offset", 0, high=MAX_SHOWN - PAGE),
    }


async def shown_nodes(
    pages: MemoryPages, request: Request, parts: RecordParts
) -> tuple[str, dict[str, Any], list[NodeView]]:
    """The asked filters and the nodes shown, their views holding ``parts`` (the page lists
    names and importance; the canvas needs edges; neither reads facts)."""
    space, asked = pages.space(request), filters(request)
    views = await pages.memory.graph.nodes(
        space, asked["type"] or None, 0, asked["offset"] + PAGE, asked["as_of"] or None, parts
    )
    return space, asked, views


def graph_url(space: str, asked: dict[str, Any], path: str = "/graph", **more: object) -> str:
    kept = {k: v for k, v in {**asked, **more}.items() if v not in ("", 0, None)}
    return f"{SECTION_PATH}{path}?{urlencode({'space': space, **kept})}"


async def graph_page(pages: MemoryPages, request: Request) -> Response:
    """``/memory/graph``: filters, the canvas, the shown nodes as links, and "100 more"."""
    space, asked, views = await shown_nodes(pages, request, "nodes")
    more = len(views) == asked["offset"] + PAGE < MAX_SHOWN
    context = {
        "asked": asked,
        "node_types": NODE_TYPES,
        "views": views,
        "json_url": graph_url(space, asked, "/graph.json"),
        "more_url": graph_url(space, asked, offset=asked["offset"] + PAGE) if more else None,
        "node_query": urlencode(
            {"space": space, **({"as_of": asked["as_of"]} if asked["as_of"] else {})}
        ),
    }
    return await pages.render(request, "memory/graph.html", context, tab="graph")


async def graph_json(pages: MemoryPages, request: Request) -> Response:
    """The shown nodes and the edges among them (history too when asked), for the canvas."""
    _, asked, views = await shown_nodes(pages, request, "edges")
    shown = {view.node.id for view in views}
    nodes = [
        {"id": v.node.id, "label": v.node.name, "type": v.node.type, "sources": v.importance}
        for v in views
    ]
    edges: dict[str, dict[str, Any]] = {}
    for view in views:
        lists = [(view.current_edges, True)]
        if asked["history"]:
            lists.append((view.historical_edges, False))
        for edge_views, current in lists:
            for item in edge_views:
                edge = item.edge
                if item.direction == "out" and edge.to_node_id in shown:
                    edges[edge.id] = {
                        "id": edge.id,
                        "source": edge.from_node_id,
                        "target": edge.to_node_id,
                        "label": edge.relation,
                        "current": current,
                        "sourceEventIds": list(edge.source_event_ids),
                    }
    return json_response({"nodes": nodes, "edges": list(edges.values())})


async def node_page(pages: MemoryPages, request: Request) -> Response:
    """``/memory/graph/nodes/{id}``: one node's facts, edges and source events (a 404 for
    an unknown id); under htmx the panel only."""
    as_of = request.query_params.get("as_of", "").strip()[:40] or None
    view = await pages.memory.graph.node(request.path_params["node_id"], as_of)  # NotFound
    cited = await pages.memory.graph.source_events(view, SOURCE_TITLES)
    context = {"view": view, "as_of": as_of or "", "value_text": value_text}
    context["source_cards"] = {card.id: card for card in cited}  # titles and quotes
    fragment = bool(request.headers.get("hx-request"))
    template = "memory/_graph_node.html" if fragment else "memory/graph_node.html"
    return await pages.render(request, template, context, tab="graph")
