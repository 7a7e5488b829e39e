"""The fallback entries' index (spec §5.1, §5.5) kept by the topics' own rule.

A fallback entry is a visible event no chapter without agent events holds, filed under its
category (``categories.event_category``) and marked when an agent chapter holds it (hidden
at agent weight 0 with that chapter). The storage keeps one entry per such event so the
directory and ``memory_list_topics`` read one page, never every event; every write that may
change an entry (an event added, changed, deleted; a member placed or moved; a chapter
added, deleted or gaining agent events) marks the events it touched in its own
transaction, and ``refile`` makes their entries again by this rule. It runs before any
read of the entries: in the sync's transaction, and before the catalog's reads.
"""

from .categories import event_category
from .storage import SpareEntry, SpareSource, TopicsTransaction

VISIBLE = ("active", "superseded")


def entry(source: SpareSource) -> SpareEntry | None:
    """The event's fallback entry, or ``None`` when it is hidden or a plain chapter holds it."""
    if source.status not in VISIBLE or source.in_plain_chapter:
        return None
    event_type = source.event_type if isinstance(source.event_type, str) else None
    category = event_category(source.criticality, event_type)
    return SpareEntry(source.pk, source.namespace, category, source.pool, source.in_agent_chapter)


def refile(tx: TopicsTransaction) -> int:
    """The marked events' entries made again, their marks cleared; how many were marked."""
    marked, sources = tx.marked_sources()
    if marked:
        tx.refile(marked, [found for s in sources if (found := entry(s)) is not None])
    return len(marked)
