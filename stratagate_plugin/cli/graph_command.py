"""``stratagate graph [QUERY] [--as-of DATE]``: the knowledge graph's nodes with their current
facts, relations and source events; with ``--as-of``, what memory believed on that date.

Without a query the most important nodes (most source events) are listed; with one, the
nodes the agent's ``memory_search_graph`` would find.
"""

import argparse
import json
from typing import Any

from ..core.graph.shapes import NODE_TYPES
from ..core.graph.views import compact_card, source_event_line
from .common import add_db_option, add_space_option, open_memory, resolve_space
from .search_command import positive


def register(commands: Any) -> None:
    parser = commands.add_parser(
        "graph",
        help="the knowledge graph: what is true now (or was believed then)",
        description="Show the knowledge graph's nodes (people, places, organisations, "
        "projects, tools) with their current facts and relations and the events they come "
        "from. With a query, the nodes matching it; with --as-of, what memory believed on "
        "that date (facts learned by then and not yet replaced).",
    )
    add_db_option(parser)
    add_space_option(parser)
    parser.add_argument("query", nargs="?", default="", help="what to look for (optional)")
    parser.add_argument("--as-of", metavar="DATE", help="a date (YYYY-MM-DD) or ISO-8601 time")
    parser.add_argument("--type", choices=NODE_TYPES, help="only nodes of this type")
    parser.add_argument(
        "--limit", "-n", type=positive, default=20, help="nodes to show (default %(default)s)"
    )
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.set_defaults(handler=graph)


async def graph(args: argparse.Namespace) -> int:
    memory = await open_memory(args)
    async with memory:
        space = await resolve_space(args, memory)
        if args.query.strip():
            hits = await memory.graph.search(space, args.query, min(args.limit, 20), args.as_of)
            shown = [hit for hit in hits if not args.type or hit.view.node.type == args.type]
            pairs = [(hit.view, hit.compact()) for hit in shown]
        else:
            views = await memory.graph.nodes(space, args.type, 0, args.limit, args.as_of)
            pairs = [(view, compact_card(view)) for view in views]
        if args.json:  # each card with its cited events' titles, quotes and messages
            for view, card in pairs:
                cited = await memory.graph.source_events(view)
                card["sourceEvents"] = [source_event_line(event) for event in cited]
    cards = [card for _, card in pairs]
    if args.json:
        print(json.dumps(cards, ensure_ascii=False, indent=2))
        return 0
    if not cards:
        when = f" as of {args.as_of}" if args.as_of else ""
        print(f"(no graph nodes in memory space {space}{when})")
        return 0
    for card in cards:
        print("\n".join(card_lines(card)))
    return 0


def card_lines(card: dict[str, Any]) -> list[str]:
    """One node: its name and type, facts, relations, history and sources, indented; each
    alias, fact and relation ends with the events it comes from."""
    lines = [f"{card['name']} [{card['type']}] {card['id']}", *_aliases(card)]
    for fact in card["facts"]:
        lines.append(f"  {fact['key']}: {_value(fact['value'])}{_since(fact)}{_from(fact)}")
    lines += [f"  {rel['relation']}{_since(rel)}{_from(rel)}" for rel in card["currentRelations"]]
    for fact in card.get("historicalFacts", []):
        lines.append(f"  was {fact['key']}: {_value(fact['value'])}{_since(fact)}{_from(fact)}")
    for rel in card.get("historicalRelations", []):
        lines.append(f"  was {rel['relation']}{_since(rel)}{_from(rel)}")
    lines.append(f"  sources: {', '.join(card['sourceEventIds']) or '(none visible)'}")
    return lines


def _aliases(card: dict[str, Any]) -> list[str]:
    """The node's other names on a line of their own, each with the events that gave it."""
    if not card.get("aliases"):
        return []
    given = card.get("metadataProvenance", {}).get("aliases", [])
    sources = {item["value"]: item["sourceEventIds"] for item in given}
    named = [alias + _ids(sources.get(alias, []), " ") for alias in card["aliases"]]
    return [f"  also: {'; '.join(named)}"]


def _from(record: dict[str, Any]) -> str:
    return _ids(record.get("sourceEventIds", []), "  ")


def _ids(event_ids: list[str], gap: str) -> str:
    return f"{gap}[{', '.join(event_ids)}]" if event_ids else ""


def _value(value: str | list[str]) -> str:
    return "、".join(value) if isinstance(value, list) else value


def _since(record: dict[str, Any]) -> str:
    start, end = record.get("validFrom"), record.get("validTo")
    if start and end:
        return f"  ({start[:10]} → {end[:10]})"
    return f"  (since {start[:10]})" if start else ""
