"""The labelled graph set (issue 26): precision and recall of nodes, types, edges and facts.

    PYTHONPATH=. .venv/bin/python benchmarks/graph_quality.py --set dev --out /tmp/gq.json
    … --only en-001,zh-003   … --lang zh   … --set heldout | all

Each item of ``benchmarks/graph_sets/{dev,dev2,heldout}.json`` (format and labelling conventions
in that folder's README) is recorded as one thread in a fresh database, sealed, and derived
with the offline model until nothing is due; then the current graph is read and scored.
Named speakers are recorded as LoCoMo loading records them (``Name: text``; the first named
speaker's lines are user messages, the others' assistant messages), so a rule tuned here
meets the same shapes on LoCoMo.

Scoring (micro-averaged per language and overall): names match case-insensitively after
alias resolution (the item's expected aliases, and each graph node's own aliases); each
expected node, edge or fact is matched by at most one graph record, so a duplicate node
(``Mel`` beside ``Melanie``) counts as an extra. The user's own node and nodes named only
as a pet (an ``owns`` target or a ``pet:`` value, no node type fits) are left out of node
scores. Edges match on (from, relation, to), the relation lower-cased; facts on (node, key,
value), the value case-insensitive and contained either way. ``not_nodes`` hits are counted.

Other helpers can score one item at a time: ``from benchmarks.graph_quality import
score_item``; ``score_item(item)`` projects it, ``score_item(item, graph)`` scores a given
``Graph`` (hand-made in tests).
"""

import argparse
import asyncio
import json
import sys
import tempfile
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from stratagate_plugin.core.config import MemoryConfig
from stratagate_plugin.core.llm.offline.model import OfflineModel
from stratagate_plugin.core.memory import StrataGate
from stratagate_plugin.core.records import MessageIn, Role

SETS_DIR = Path(__file__).parent / "graph_sets"
SET_NAMES = ("dev", "dev2", "heldout")
USER = "user"
SPACE = "graph-quality"
THREAD = "labelled"
STARTED = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
KINDS = ("nodes", "edges", "facts")


@dataclass(frozen=True)
class Node:
    name: str
    type: str
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True)
class Edge:
    source: str  # node names as the graph holds them
    relation: str
    target: str


@dataclass(frozen=True)
class Fact:
    node: str
    key: str
    value: str


@dataclass
class Graph:
    """What a projection left current, by node name (hand-made in tests)."""

    nodes: list[Node] = field(default_factory=list)
    edges: list[Edge] = field(default_factory=list)
    facts: list[Fact] = field(default_factory=list)


@dataclass
class Score:
    """Counts for one item (or a sum of items) and the records behind them."""

    counts: dict[str, int] = field(default_factory=dict)
    details: dict[str, list[Any]] = field(default_factory=dict)

    def add(self, other: "Score") -> None:
        for name, value in other.counts.items():
            self.counts[name] = self.counts.get(name, 0) + value

    def ratio(self, hit: str, total: str) -> float | None:
        denominator = self.counts.get(total, 0)
        return self.counts.get(hit, 0) / denominator if denominator else None

    def summary(self) -> dict[str, float | int | None]:
        """Precision / recall per kind, type precision, alias recall, not_node hits."""
        out: dict[str, float | int | None] = {}
        for kind in KINDS:
            out[f"{kind} P"] = self.ratio(f"{kind}_matched", f"{kind}_found")
            out[f"{kind} R"] = self.ratio(f"{kind}_recalled", f"{kind}_expected")
        out["type P"] = self.ratio("types_right", "nodes_matched")
        out["aliases R"] = self.ratio("aliases_recalled", "aliases_expected")
        out["not_nodes hit"] = self.counts.get("not_nodes_hit", 0)
        out["items"] = self.counts.get("items", 0)
        return out


def key(name: str) -> str:
    return " ".join(str(name).split()).casefold()


class Names:
    """Resolves a name to its canonical key through the item's expected aliases."""

    def __init__(self, aliases: Iterable[dict[str, str]]):
        self.canonical = {key(a["alias"]): key(a["of"]) for a in aliases}

    def of(self, name: str) -> str:
        return self.canonical.get(key(name), key(name))

    def node_keys(self, node: Node | None, fallback: str) -> set[str]:
        """Every canonical key a graph node answers to: its name and its own aliases."""
        names = [node.name, *node.aliases] if node else [fallback]
        return {self.of(name) for name in names}


def score_item(item: dict[str, Any], graph: Graph | None = None) -> Score:
    """Score one labelled item; without ``graph`` the item is projected first (offline)."""
    if graph is None:
        graph = asyncio.run(project_item(item))
    expect = item["expect"]
    names = Names(expect.get("aliases", []))
    by_name = {key(node.name): node for node in graph.nodes}
    score = Score(counts={"items": 1})
    _score_nodes(score, expect, item.get("not_nodes", []), graph, names)
    _score_edges(score, expect["edges"], graph.edges, names, by_name, item["turns"])
    _score_facts(score, expect["facts"], graph.facts, names, by_name)
    _score_aliases(score, expect.get("aliases", []), graph.nodes, names)
    return score


def _pet_names(expect: dict[str, Any], names: Names) -> set[str]:
    owned = {names.of(e["to"]) for e in expect["edges"] if e["relation"] == "owns"}
    owned |= {names.of(f["value"]) for f in expect["facts"] if f["key"].startswith("pet:")}
    return owned - {names.of(n["name"]) for n in expect["nodes"]}


def _score_nodes(
    score: Score, expect: dict[str, Any], not_nodes: list[str], graph: Graph, names: Names
) -> None:
    wanted = [n for n in expect["nodes"] if names.of(n["name"]) != USER]
    neutral = _pet_names(expect, names) | {USER}
    found = [n for n in graph.nodes if not names.node_keys(n, n.name) & neutral]
    unused = list(found)
    missing, wrong_type = [], []
    for node in wanted:
        match = next((g for g in unused if names.of(node["name"]) in names.node_keys(g, "")), None)
        if match is None:
            missing.append(node)
            continue
        unused.remove(match)
        if match.type != node["type"]:
            wrong_type.append({"name": node["name"], "type": node["type"], "got": match.type})
    matched = len(wanted) - len(missing)
    banned = {key(name) for name in not_nodes}
    hits = [n.name for n in graph.nodes if {key(x) for x in (n.name, *n.aliases)} & banned]
    score.counts |= {
        "nodes_expected": len(wanted),
        "nodes_recalled": matched,
        "nodes_found": len(found),
        "nodes_matched": matched,
        "types_right": matched - len(wrong_type),
        "not_nodes_hit": len(hits),
    }
    score.details |= {
        "missing nodes": missing,
        "extra nodes": [{"name": n.name, "type": n.type} for n in unused],
        "wrong types": wrong_type,
        "not_nodes hit": hits,
    }


def _score_edges(
    score: Score,
    wanted: list[dict[str, str]],
    found: list[Edge],
    names: Names,
    by_name: dict[str, Node],
    turns: list[dict[str, str]],
) -> None:
    def same(want: dict[str, str], edge: Edge) -> bool:
        return (
            key(want["relation"]) == key(edge.relation)
            and names.of(want["from"])
            in names.node_keys(by_name.get(key(edge.source)), edge.source)
            and names.of(want["to"]) in names.node_keys(by_name.get(key(edge.target)), edge.target)
        )

    speakers = {names.of(t["speaker"]) for t in turns if t["speaker"] not in (USER, "assistant")}
    found = [e for e in found if not _between_speakers(e, speakers, names, by_name)]
    missing, unused = _match(wanted, found, same)
    _record(score, "edges", wanted, found, missing, unused)
    score.details["extra edges"] = [[e.source, e.relation, e.target] for e in unused]


def _between_speakers(
    edge: Edge, speakers: set[str], names: Names, by_name: dict[str, Node]
) -> bool:
    """A ``knows`` edge between two named speakers of the item (they talk to each other):
    true, but the labels predate it, so it is neither rewarded nor counted as an extra."""
    ends = [names.node_keys(by_name.get(key(n)), n) for n in (edge.source, edge.target)]
    return key(edge.relation) == "knows" and all(end & speakers for end in ends)


def _score_facts(
    score: Score,
    wanted: list[dict[str, str]],
    found: list[Fact],
    names: Names,
    by_name: dict[str, Node],
) -> None:
    def same(want: dict[str, str], fact: Fact) -> bool:
        value, got = key(want["value"]), key(fact.value)
        return (
            key(want["key"]) == key(fact.key)
            and names.of(want["node"]) in names.node_keys(by_name.get(key(fact.node)), fact.node)
            and bool(value and got)
            and (value in got or got in value)
        )

    missing, unused = _match(wanted, found, same)
    _record(score, "facts", wanted, found, missing, unused)
    score.details["extra facts"] = [[f.node, f.key, f.value] for f in unused]


def _match(wanted: list[Any], found: Sequence[Any], same: Any) -> tuple[list[Any], list[Any]]:
    """One-to-one greedy matching: the expected records left over and the found ones."""
    unused = list(found)
    missing = []
    for want in wanted:
        match = next((got for got in unused if same(want, got)), None)
        if match is None:
            missing.append(want)
        else:
            unused.remove(match)
    return missing, unused


def _record(
    score: Score,
    kind: str,
    wanted: list[Any],
    found: Sequence[Any],
    missing: list[Any],
    unused: list[Any],
) -> None:
    score.counts |= {
        f"{kind}_expected": len(wanted),
        f"{kind}_recalled": len(wanted) - len(missing),
        f"{kind}_found": len(found),
        f"{kind}_matched": len(found) - len(unused),
    }
    score.details[f"missing {kind}"] = missing


def _score_aliases(
    score: Score, wanted: list[dict[str, str]], nodes: list[Node], names: Names
) -> None:
    """An alias is recalled when one graph node answers to both the alias and its owner (the
    user's node may carry either as its name)."""
    sets = [{key(x) for x in (n.name, *n.aliases)} for n in nodes]
    missing = [a for a in wanted if not any({key(a["alias"]), key(a["of"])} <= s for s in sets)]
    score.counts |= {
        "aliases_expected": len(wanted),
        "aliases_recalled": len(wanted) - len(missing),
    }
    score.details["missing aliases"] = missing


# --- projection -------------------------------------------------------------------------


def turns_of(item: dict[str, Any]) -> list[list[MessageIn]]:
    """The item's messages as recorded turns: a turn starts at each user message."""
    speakers = [t["speaker"] for t in item["turns"] if t["speaker"] not in ("user", "assistant")]
    first = speakers[0] if speakers else None
    turns: list[list[MessageIn]] = []
    for index, turn in enumerate(item["turns"]):
        speaker, text = turn["speaker"], turn["text"]
        role: Role = "user" if speaker in ("user", first) else "assistant"
        content = text if speaker in ("user", "assistant") else f"{speaker}: {text}"
        at = STARTED + timedelta(minutes=index)
        if role == "user" or not turns:
            turns.append([])
        turns[-1].append(MessageIn(role=role, content=content, at=at))
    return turns


async def project_item(item: dict[str, Any]) -> Graph:
    """Record, seal and derive the item in a fresh database; the current graph."""
    with tempfile.TemporaryDirectory(prefix="graph-quality-") as scratch:
        db = Path(scratch) / "memory.db"
        async with await StrataGate.open(db, MemoryConfig(), OfflineModel()) as sg:
            for turn in turns_of(item):
                await sg.blocks.record_turn(SPACE, THREAD, turn, at=turn[0].at)
            await sg.blocks.seal_tail(SPACE, THREAD)
            await derive(sg)
            return await read_graph(sg, SPACE)


async def derive(sg: StrataGate, passes: int = 20) -> None:
    """``process_pending`` until a pass runs no block or graph job."""
    for _ in range(passes):
        report = await sg.derivation.process_pending()
        if report.ran + report.graph_ran == 0:
            return


async def read_graph(sg: StrataGate, space: str) -> Graph:
    """Every node with its current facts and current edges (each edge once)."""
    views = await sg.graph.nodes(space, limit=1000)
    graph = Graph()
    name_of = {view.node.id: view.node.name for view in views}
    seen: set[str] = set()
    for view in views:
        node = view.node
        graph.nodes.append(Node(node.name, node.type, tuple(node.aliases)))
        for fact in view.current_facts:
            value = fact.value if isinstance(fact.value, str) else ", ".join(fact.value)
            graph.facts.append(Fact(node.name, fact.key, value))
        for edge_view in view.current_edges:
            edge = edge_view.edge
            if edge.id in seen:
                continue
            seen.add(edge.id)
            source = name_of.get(edge.from_node_id, edge.from_node_id)
            graph.edges.append(
                Edge(source, edge.relation, name_of.get(edge.to_node_id, edge.to_node_id))
            )
    return graph


# --- the command ------------------------------------------------------------------------


def load_items(
    which: str, only: set[str] | None = None, lang: str | None = None
) -> list[dict[str, Any]]:
    names = SET_NAMES if which == "all" else (which,)
    items = [i for n in names for i in json.loads((SETS_DIR / f"{n}.json").read_text("utf-8"))]
    return [i for i in items if (not only or i["id"] in only) and (not lang or i["lang"] == lang)]


def run(items: list[dict[str, Any]]) -> tuple[dict[str, Score], list[dict[str, Any]]]:
    """Score every item; totals per language and overall, and the per-item details."""
    totals = {name: Score() for name in ("en", "zh", "all")}
    rows = []
    for item in items:
        started = time.perf_counter()
        score = score_item(item)
        for name in (item["lang"], "all"):
            totals[name].add(score)
        rows.append(
            {
                "id": item["id"],
                "lang": item["lang"],
                "seconds": round(time.perf_counter() - started, 2),
            }
            | score.details
            | {"counts": score.counts}
        )
    return {n: s for n, s in totals.items() if s.counts}, rows


def table(totals: dict[str, Score]) -> str:
    heads = ["lang", "items", "nodes P", "nodes R", "type P", "edges P", "edges R", "facts P"]
    heads += ["facts R", "aliases R", "not_nodes hit"]
    lines = [" | ".join(heads), " | ".join("---" for _ in heads)]
    for name, score in totals.items():
        summary = score.summary()
        cells = [name] + [_cell(summary[head]) for head in heads[1:]]
        lines.append(" | ".join(cells))
    return "\n".join(lines)


def _cell(value: float | int | None) -> str:
    if value is None:
        return "-"
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", default="dev", choices=(*SET_NAMES, "all"))
    parser.add_argument("--only", help="comma-separated item ids")
    parser.add_argument("--lang", choices=("en", "zh"))
    parser.add_argument("--out", type=Path, help="per-item details as JSON")
    args = parser.parse_args(argv)
    only = set(args.only.split(",")) if args.only else None
    items = load_items(args.set, only, args.lang)
    if not items:
        sys.exit("no item matches")
    started = time.perf_counter()
    totals, rows = run(items)
    print(table(totals))
    print(f"{len(items)} items in {time.perf_counter() - started:.1f} s")
    if args.out:
        report = {"totals": {n: s.summary() | {"counts": s.counts} for n, s in totals.items()}}
        args.out.write_text(json.dumps(report | {"items": rows}, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
