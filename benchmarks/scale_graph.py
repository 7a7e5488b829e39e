"""The graph and topic catalog of ``search_scale.py``'s namespace, written at scale.

The background jobs would take far too long at 100k events (topics spend a historical
budget of 2 batches per 10 minutes), so a seeded generator writes them straight through
the store's own write code instead: graph projections of ≤ 24 nodes are checked by
``validate_projection`` and applied by ``graph.apply.apply_projection`` (entity resolution,
supersede by key, search terms, sources), and chapters go through
``topic_rows.save_topic`` / ``set_members`` with each member's real fingerprint and
category, as the topic job commits them. Every fact and edge cites visible events.
"""

import json
import random
import sqlite3
import time
from pathlib import Path

from stratagate_plugin.core.graph.apply import apply_projection
from stratagate_plugin.core.graph.projection import EventTimes, validate_projection
from stratagate_plugin.core.graph.shapes import (
    EdgeDraft,
    FactDraft,
    GraphProjection,
    NodeDraft,
    NodeType,
)
from stratagate_plugin.core.llm.tasks import TopicParagraph, TopicSection
from stratagate_plugin.core.store import event_rows, topic_rows
from stratagate_plugin.core.store.search_index import register_functions
from stratagate_plugin.core.store.sqlite.graph import SqliteGraphTransaction
from stratagate_plugin.core.topics.categories import event_category, majority_category
from stratagate_plugin.core.topics.fingerprint import event_fingerprint
from stratagate_plugin.core.topics.model import Topic

FACT_KEYS = ("role", "status", "location", "prefers", "works_on", "owns", "plans", "uses")
RELATIONS = ("knows", "works_with", "part_of", "uses", "lives_in", "manages")
TYPES: tuple[NodeType, ...] = ("person", "project", "organization", "tool", "place")
NODES_PER_BATCH, MEMBERS = 24, (8, 30)
LEARNED_AT = "2026-01-01T00:00:00+00:00"


def build_structure(
    path: Path, space: str, rng: random.Random, nodes: int, chapters: int, words: list[str]
) -> dict[str, float]:
    """Write ``nodes`` graph nodes (facts and edges citing events) and ``chapters`` topics."""
    raw = sqlite3.connect(path, isolation_level=None)
    raw.row_factory = sqlite3.Row
    register_functions(raw)
    rows = raw.execute(
        "SELECT id, temporal_json, created_at FROM events WHERE namespace = ? "
        "AND status IN ('active', 'superseded') ORDER BY pk",
        (space,),
    ).fetchall()
    times = {r[0]: EventTimes.of(json.loads(r[1]), r[2]) for r in rows}
    visible = list(times)
    started = time.perf_counter()
    raw.execute("BEGIN")
    for start in range(0, nodes, NODES_PER_BATCH):
        count = min(NODES_PER_BATCH, nodes - start)
        _project_batch(raw, space, rng, words, visible, times, start, count)
    raw.execute("COMMIT")
    graph_done = time.perf_counter()
    raw.execute("BEGIN")
    _chapters(raw, space, rng, words, visible, chapters)
    raw.execute("COMMIT")
    raw.close()
    done = time.perf_counter()
    return {"graph_s": round(graph_done - started, 2), "topics_s": round(done - graph_done, 2)}


def _project_batch(
    raw: sqlite3.Connection,
    space: str,
    rng: random.Random,
    words: list[str],
    visible: list[str],
    times: dict[str, EventTimes],
    start: int,
    count: int,
) -> None:
    drafts, batch = [], set()
    for index in range(start, start + count):
        sources = rng.sample(visible, rng.randint(1, 3))
        facts = []
        for key in rng.sample(FACT_KEYS, rng.randint(1, 4)):
            cited = rng.sample(visible, rng.randint(1, 2))
            facts.append(
                FactDraft(key=key, value=" ".join(rng.sample(words, 2)), source_event_ids=cited)
            )
            batch.update(cited)
        name = f"{rng.choice(words).title()} {rng.choice(words).title()} {index}"
        kind: NodeType = "person" if index % 3 else rng.choice(TYPES)
        drafts.append(
            NodeDraft(ref=f"n{index}", name=name, type=kind, tags=rng.sample(words, 2),
                      source_event_ids=sources, facts=facts)
        )  # fmt: skip
        batch.update(sources)
    edges = []
    for draft in drafts[1:]:
        cited = [rng.choice(draft.source_event_ids)]
        edges.append(
            EdgeDraft(from_ref=draft.ref, to_ref=rng.choice(drafts).ref,
                      relation=rng.choice(RELATIONS), source_event_ids=cited)
        )  # fmt: skip
    edges = [e for e in edges if e.from_ref != e.to_ref]
    checked = validate_projection(GraphProjection(nodes=drafts, edges=edges), batch, batch)
    apply_projection(SqliteGraphTransaction(raw), space, checked, times, LEARNED_AT)


def _chapters(
    raw: sqlite3.Connection,
    space: str,
    rng: random.Random,
    words: list[str],
    visible: list[str],
    chapters: int,
) -> None:
    """Chapters of disjoint random member sets, each with its sections and an overview."""
    pool = rng.sample(visible, min(len(visible), chapters * MEMBERS[1]))
    at = 0
    for index in range(chapters):
        size = rng.randint(*MEMBERS)
        ids, at = pool[at : at + size], at + size
        if not ids:
            break
        cards = event_rows.visible_cards(raw, space, ids)
        kinds = {c.id: event_category(c.criticality, c.temporal.get("event_type")) for c in cards}
        stamp, member_ids = cards[0].created_at, [c.id for c in cards]
        topic = Topic(
            id=f"topic_{index:05}",
            namespace=space,
            title=" ".join(rng.sample(words, 3)).title(),
            description=" ".join(rng.sample(words, 12)),
            category=majority_category(kinds.values()),
            member_ids=member_ids,
            sections=[TopicSection(title=rng.choice(words).title(), event_ids=member_ids)],
            overview=[TopicParagraph(kind="history", text=" ".join(rng.sample(words, 20)),
                                     event_ids=member_ids[:12])],
            keywords=sorted({t for c in cards for t in c.tags})[:20],
            has_agent=any(c.pool == "agent" for c in cards),
            created_at=stamp,
            updated_at=stamp,
        )  # fmt: skip
        fingerprints = {c.id: event_fingerprint(c) for c in cards}
        topic_rows.save_topic(raw, topic)
        topic_rows.set_members(raw, topic, cards, fingerprints, kinds)
