"""One topic batch read and committed (spec §5.3, §5.4): the reads a projection needs
and the transaction that applies its validated answer.

The input is read in one transaction and the answer committed in another, after the model
call: the commit goes ahead only if the claim is still held and every event and chapter it
read is as it was. The embedded grouper also gets how rare each word is in the memory and
every chapter title of the space, and its chapters are worded again from all they hold.
"""

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ...errors import StrataGateError
from ...events.cards import EventCard
from ...ids import new_id
from ...llm.prompts import load_prompt
from ...llm.tasks import PROJECT_MEMORY_TOPICS, TopicProjection
from ...records import Job
from ..batching import (
    bounded_event,
    candidate_view,
    compact_event,
    exposed_payload,
    rank_candidates,
)
from ..categories import event_category, majority_category
from ..fingerprint import event_fingerprint
from ..merge import apply_projection
from ..model import Topic, label_key
from ..reword import reworded
from ..storage import TopicsTransaction
from ..subjects import TermStats, tokens_of
from ..unfiled import refile

LOST = "lost"


class SourceChanged(StrataGateError):
    """An event or chapter the projection read changed before its answer was committed."""


@dataclass
class BatchInput:
    batch_ids: list[str]
    cards: dict[str, EventCard]
    fingerprints: dict[str, str]
    candidates: dict[str, Topic]
    labels: dict[str, str]
    truncated: list[str]
    payload: dict[str, Any]


def read_input(tx: TopicsTransaction, job: Job, grouper: bool = False) -> BatchInput:
    """The batch's visible events (fingerprinted now) and the chapters it may extend; for
    the embedded grouper also how rare each word is and every title of the space."""
    _historical, topic_id, queued = tx.batch_of(job.target_id)
    cards = {c.id: c for c in tx.visible_cards(job.namespace, queued)}
    batch_ids = [event_id for event_id in queued if event_id in cards]
    entries, truncated = [], []
    for event_id in batch_ids:
        entry, cut = bounded_event(cards[event_id])
        entries.append(entry)
        if cut:
            truncated.append(event_id)
    topics = tx.load_topics(job.namespace)
    holding = tx.topics_holding(batch_ids) if batch_ids else {}
    continued = set(holding.values()) | ({topic_id} if topic_id else set())
    keys = {label_key(w) for e in entries for w in [*e["participants"], *e["tags"]]}
    first = [t for t in topics if t.id in continued or label_key(t.title) in keys]
    ranked = rank_candidates([*first, *(t for t in topics if t not in first)], entries)
    full = [t for t in (tx.get_topic(topic.id) for topic in ranked) if t]
    views = [candidate_view(topic, batch_ids) for topic in full]
    payload = exposed_payload(entries, truncated, views, load_prompt(PROJECT_MEMORY_TOPICS))
    exposed = {view["topic_id"] for view in payload["candidates"]}
    if grouper:
        views = payload["candidates"]
        words = [*entries, *({"title": "", "tags": [v["title"], *v["keywords"]]} for v in views)]
        counts, total = tx.term_stats(tokens_of(words))
        payload = {**payload, "term_stats": {"counts": counts, "total": total}}
        payload["taken_titles"] = [t.title for t in topics if t.title]
    return BatchInput(
        batch_ids=batch_ids,
        cards=cards,
        fingerprints={i: event_fingerprint(cards[i]) for i in batch_ids},
        candidates={topic.id: topic for topic in full if topic.id in exposed},
        labels={label_key(t.title): t.id for t in topics if t.title},
        truncated=truncated,
        payload=payload,
    )


def commit(
    tx: TopicsTransaction,
    job: Job,
    given: BatchInput,
    result: TopicProjection | None,
    now: datetime,
    grouper: bool = False,
) -> str:
    """Apply the validated answer under the claim, if nothing it read changed meanwhile;
    the grouper's chapters worded again from all they hold (``reword``)."""
    if not tx.holds(job):
        return LOST
    if result is None:
        tx.close_batch(job.target_id)
        tx.finish_job(job, "skipped", now, "no visible event left in the batch")
        return "skipped"
    _check_unchanged(tx, job.namespace, given)
    keywords = {i: [*c.temporal.get("participants", []), *c.tags] for i, c in given.cards.items()}
    changed = apply_projection(
        result, given.candidates, job.namespace, keywords, now, lambda: new_id("topic")
    )
    categories = {
        i: event_category(c.criticality, c.temporal.get("event_type"))
        for i, c in given.cards.items()
    }
    for topic, projected in zip(changed, result.topics, strict=True):
        placed = [given.cards[i] for i in projected.event_ids]
        tx.save_topic(topic)
        tx.set_members(topic, placed, (given.fingerprints, categories))
        if grouper:
            topic = _reworded(tx, topic)
        kinds, has_agent = tx.member_summary(topic.id)
        whole = topic.model_copy(
            update={"category": majority_category(kinds), "has_agent": has_agent}
        )
        tx.save_topic(whole)
    tx.delete_empty_topics(job.namespace)
    refile(tx)  # the events it placed leave the fallback entries in this transaction
    tx.close_batch(job.target_id)
    tx.finish_job(job, "succeeded", now, f"{len(changed)} topics")
    return "succeeded"


def _reworded(tx: TopicsTransaction, topic: Topic) -> Topic:
    cards = {c.id: c for c in tx.visible_cards(topic.namespace, topic.member_ids)}
    members = [compact_event(cards[i]) for i in topic.member_ids if i in cards]
    counts, total = tx.term_stats(tokens_of(members))
    taken = tx.chapter_titles(topic.namespace)
    return reworded(topic, members, TermStats(counts, total), taken)


def _check_unchanged(tx: TopicsTransaction, space: str, given: BatchInput) -> None:
    now_cards = {c.id: c for c in tx.visible_cards(space, given.batch_ids)}
    for event_id, fingerprint in given.fingerprints.items():
        card = now_cards.get(event_id)
        if card is None or event_fingerprint(card) != fingerprint:
            raise SourceChanged(f"event {event_id} changed while its topics were projected")
    for topic_id, topic in given.candidates.items():
        current = tx.get_topic(topic_id)
        if current is None or current.updated_at != topic.updated_at:
            raise SourceChanged(f"topic {topic_id} changed while the batch was projected")
