"""Graph search (spec §6.5): BM25 over node views with weighted fields. Pure.

Fields: name ×6, aliases ×5, tags ×5, type ×2, current facts ×4, historical facts ×2, current
edge ends ×4, historical ends ×2, relation labels ×1. A node is returned only for a
meaningful hit — a match outside relation labels, which rank but never qualify — and says
whether it matched current or historical statements (or both). Nodes the query names
(by name or alias) come first: asked about someone, the answer starts with them.
"""

from collections.abc import Sequence
from functools import lru_cache
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from ..retrieval.bm25 import bm25_rank
from ..text.search_terms import tokenize
from .shapes import GRAPH_PROVENANCE_LIMIT, value_text
from .views import NodeView, compact_card, fact_line, relation_line

DEFAULT_LIMIT, MAX_LIMIT = 8, 20
CANDIDATES_PER_RESULT, CANDIDATE_FLOOR = 3, 16
TOKEN_CACHE = 1 << 14  # field texts whose tokens a process remembers (~1 KB each: ≤ ~16 MB)
MatchType = Literal["current", "historical", "both"]
_METADATA = ("name", "aliases", "tags", "type")
_CURRENT = ("currentFacts", "currentEdgeEndpoints")
_HISTORICAL = ("historicalFacts", "historicalEdgeEndpoints")
SCORE_MEANING = "Ranking-only BM25/RRF score; not confidence, probability, or factual accuracy."


def candidate_cap(limit: int) -> int:
    """Nodes read and ranked for ``limit`` results: three times as many (at least 16), by
    shared query terms then importance. Reading a node's view is the search's cost, so the
    cap follows what is asked (24 for the default 8, 60 for the largest 20), not a constant."""
    return max(CANDIDATE_FLOOR, CANDIDATES_PER_RESULT * min(max(limit, 1), MAX_LIMIT))


class GraphHit(BaseModel):
    model_config = ConfigDict(frozen=True)

    view: NodeView
    score: float
    matched_fields: tuple[str, ...]
    match_type: MatchType
    provenance_event_ids: tuple[str, ...]

    def compact(self) -> dict[str, Any]:
        card = compact_card(self.view)
        card["sourceEventIds"] = list(self.provenance_event_ids)
        reason = f"Meaningful {self.match_type} match in {', '.join(self.matched_fields)}"
        return card | {
            "rankScore": round(self.score, 4),
            "matchedFields": list(self.matched_fields),
            "matchType": self.match_type,
            "matchReason": reason + "; relation text is ranking-only.",
            "scoreMeaning": SCORE_MEANING,
        }

    def recall_line(self, facts: int = 4, chars: int = 200) -> dict[str, Any]:
        """Automatic recall's compact line: current facts (matched ones first) and
        relations, a few of each, values cut short."""
        view = self.view
        matched = set(self.provenance_event_ids)
        ordered = sorted(view.current_facts, key=lambda f: not matched & set(f.source_event_ids))
        line: dict[str, Any] = {"nodeId": view.node.id, "name": view.node.name}
        line |= {"type": view.node.type, "matchType": self.match_type}
        if view.node.aliases:
            line["aliases"] = list(view.node.aliases[:4])
        line["facts"] = [_short(fact_line(fact, 0), chars) for fact in ordered[:facts]]
        line["currentRelations"] = [
            relation_line(e, 0)["relation"] for e in view.current_edges[:facts]
        ]
        if view.historical_facts or view.historical_edges:
            line["historicalCount"] = len(view.historical_facts) + len(view.historical_edges)
        return line


def _short(line: dict[str, Any], chars: int) -> dict[str, Any]:
    value = line["value"]
    line["value"] = value[:chars] if isinstance(value, str) else [v[:chars] for v in value[:6]]
    return line


def node_fields(view: NodeView) -> dict[str, str]:
    """Each searchable field of a node as one text."""
    node = view.node
    return {
        "name": node.name,
        "aliases": " ".join(node.aliases),
        "tags": " ".join(node.tags),
        "type": node.type,
        "currentFacts": _facts(view.current_facts),
        "historicalFacts": _facts(view.historical_facts),
        "currentEdgeEndpoints": " ".join(e.other_name for e in view.current_edges),
        "historicalEdgeEndpoints": " ".join(e.other_name for e in view.historical_edges),
        "relations": " ".join(
            e.edge.relation for e in (*view.current_edges, *view.historical_edges)
        ),
    }


WEIGHTS = {
    "name": 6,
    "aliases": 5,
    "tags": 5,
    "type": 2,
    "currentFacts": 4,
    "historicalFacts": 2,
    "currentEdgeEndpoints": 4,
    "historicalEdgeEndpoints": 2,
    "relations": 1,
}


def _facts(facts: Sequence[Any]) -> str:
    return " ".join(f"{fact.key} {value_text(fact.value)}" for fact in facts)


def search_nodes(
    terms: Sequence[str], views: Sequence[NodeView], limit: int = DEFAULT_LIMIT
) -> list[GraphHit]:
    """The best ``limit`` (1–20) nodes with a meaningful hit; no terms → nothing."""
    limit = max(1, min(MAX_LIMIT, limit))
    if not terms or not views:
        return []
    tokens = _Tokens()
    fields = {view.node.id: node_fields(view) for view in views}
    docs = {
        node_id: [
            token
            for name, text in texts.items()
            for token in tokens(text) * WEIGHTS[name]  # field boosting, as weighted_tokens
        ]
        for node_id, texts in fields.items()
    }
    by_id = {view.node.id: view for view in views}
    wanted = set(terms)
    hits: list[GraphHit] = []
    for node_id, score in bm25_rank(list(terms), docs):
        matched = [name for name, text in fields[node_id].items() if wanted & tokens.set(text)]
        hit = _hit(by_id[node_id], score, matched, wanted, tokens)
        if hit is not None:
            hits.append(hit)
    named = [hit for hit in hits if {"name", "aliases"} & set(hit.matched_fields)]
    first = {hit.view.node.id for hit in named}
    return [*named, *(hit for hit in hits if hit.view.node.id not in first)][:limit]


class _Tokens:
    """``tokenize`` once per distinct text: a fact's text is read for the ranking, the
    matched fields and the provenance, and the same nodes' names and facts come back
    search after search (``field_tokens`` remembers them for the process)."""

    def __call__(self, text: str) -> tuple[str, ...]:
        return field_tokens(text)

    def set(self, text: str) -> frozenset[str]:
        return field_token_set(text)


@lru_cache(maxsize=TOKEN_CACHE)
def field_tokens(text: str) -> tuple[str, ...]:
    """A node field's tokens (``tokenize`` is pure: remembered, never stale)."""
    return tuple(tokenize(text))


@lru_cache(maxsize=TOKEN_CACHE)
def field_token_set(text: str) -> frozenset[str]:
    return frozenset(field_tokens(text))


def _hit(
    view: NodeView, score: float, matched: list[str], terms: set[str], tokens: "_Tokens"
) -> GraphHit | None:
    if not [name for name in matched if name != "relations"]:
        return None  # relation text is ranking-only
    current = any(name in _CURRENT for name in matched)
    historical = any(name in _HISTORICAL for name in matched)
    if not current and not historical:  # metadata only: current while it has current facts
        current = bool(view.current_facts or view.current_edges) or not view.historical_facts
        historical = not current
    kind: MatchType = "both" if current and historical else "current" if current else "historical"
    return GraphHit(
        view=view,
        score=score,
        matched_fields=tuple(matched),
        match_type=kind,
        provenance_event_ids=_provenance(view, terms, tokens),
    )


def _provenance(view: NodeView, terms: set[str], tokens: "_Tokens") -> tuple[str, ...]:
    """Up to six source events, those of the matched facts and edges first."""
    matched: list[str] = []
    for fact in (*view.current_facts, *view.historical_facts):
        if terms & tokens.set(f"{fact.key} {value_text(fact.value)}"):
            matched += fact.source_event_ids
    for edge in (*view.current_edges, *view.historical_edges):
        if terms & tokens.set(edge.other_name):
            matched += edge.edge.source_event_ids
    visible = set(view.source_event_ids) | set(matched)
    ordered = [i for i in dict.fromkeys([*matched, *view.source_event_ids]) if i in visible]
    return tuple(ordered[:GRAPH_PROVENANCE_LIMIT])


def statement_events(hits: Sequence[GraphHit], terms: Sequence[str], limit: int) -> list[str]:
    """The retrieval channel's events (``retrieval.fused``): of each hit in order, the
    sources of its facts and edges sharing a query term other than the node's own names,
    most shared first. The names chose the node; every statement about it repeats them, so
    they cannot tell its statements apart (nor can a node's own sources, every event naming
    it)."""
    found: list[str] = []
    for hit in hits:
        view = hit.view
        wanted = set(terms) - set(tokenize(" ".join((view.node.name, *view.node.aliases))))
        statements = [  # keys and relations read as words: "lives_in" answers "live"
            (f"{_words(fact.key)} {value_text(fact.value)}", fact.source_event_ids)
            for fact in (*view.current_facts, *view.historical_facts)
        ]
        statements += [
            (f"{edge.other_name} {_words(edge.edge.relation)}", edge.edge.source_event_ids)
            for edge in (*view.current_edges, *view.historical_edges)
        ]
        scored = [(len(wanted & set(tokenize(text))), ids) for text, ids in statements]
        for shared, ids in sorted(scored, key=lambda pair: -pair[0]):
            if shared:
                found += [i for i in ids if i not in found]
        if len(found) >= limit:
            break
    return found[:limit]


def _words(label: str) -> str:
    return label.replace("_", " ").replace(":", " ")
