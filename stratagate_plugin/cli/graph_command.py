"""``stratagate graph [QUERY] [--as-of DATE]``: the knowledge graph's nodes with their current
facts, relations and source events; with ``--as-of``, what memory believed on that date.

Without a query the most important nodes (most source events) are listed; with one, the
nodes the agent's ``memory_search_graph`` would find.
"""

import argparse
import json
from typing import Any

from ..core.graph.shapes import NODE_TYPES
from ..core.graph.views import compact_card
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
            hits = await memory.search_graph(space, args.query, min(args.limit, 20), args.as_of)
            cards = [
                hit.compact() for hit in hits if not args.type or hit.view.node.type == args.type
            ]
        else:
            views = await memory.graph_nodes(space, args.type, 0, args.limit, args.as_of)
            cards = [compact_card(view) for view in views]
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
    """One node: its name and type, facts, relations, history and sources, indented."""
    aliases = f" (also {', '.join(card['aliases'])})" if card.get("aliases") else ""
    lines = [f"{card['name']} [{card['type']}] {card['id']}{aliases}"]
    lines += [f"  {fact['key']}: {_value(fact['value'])}{_since(fact)}" for fact in card["facts"]]
    lines += [f"  {rel['relation']}{_since(rel)}" for rel in card["currentRelations"]]
    for fact in card.get("historicalFacts", []):
        lines.append(f"  was {fact['key']}: {_value(fact['value'])}{_since(fact)}")
    for rel in card.get("historicalRelations", []):
        lines.append(f"  was {rel['relation']}{_since(rel)}")
    lines.append(f"  sources: {', '.join(card['sourceEventIds']) or '(none visible)'}")
    return lines


def _value(value: str | list[str]) -> str:
    return "、".join(value) if isinstance(value, list) else value


def _since(record: dict[str, Any]) -> str:
    start, end = record.get("validFrom"), record.get("validTo")
    if start and end:
        return f"  ({start[:10]} → {end[:10]})"
    return f"  (since {start[:10]})" if start else ""
