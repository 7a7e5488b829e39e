"""The catalog's listing reads only the page it shows (issue #29): its window of chapters,
grouped category counts and firsts, members counted for the shown rows. Every page must
equal the listing made from every chapter materialised, as it was made before: with mixed
categories, pending and stale chapters, agent chapters hidden at weight 0, ties in
creation time, offsets past the chapters into the fallback entries, and queries."""

from collections import Counter
from datetime import timedelta

from cards import T0
from topic_data import add_events, new_space

from stratagate_plugin.core.memory import StrataGate
from stratagate_plugin.core.text.search_terms import query_tokens
from stratagate_plugin.core.topics import catalog, chapter_index
from stratagate_plugin.core.topics.categories import CATEGORIES
from stratagate_plugin.core.topics.directory import Entry, Listing, rank_entries
from stratagate_plugin.core.topics.model import Topic
from stratagate_plugin.core.topics.storage import TopicsTransaction
from stratagate_plugin.core.topics.sync import stale_members

NS = "window"
CHAPTERS = 260
WORDS = ["kiln", "glaze", "harbor", "violin", "orchard", "ledger", "comet", "saddle"]
WINDOWS = [(0, 20), (5, 7), (60, 20), (150, 20), (240, 20), (250, 30), (400, 20)]
QUERIES = ["kiln", "glaze harbor", "violin orchard comet", "event kiln", "subject0605", "nothing"]


def _chapter(n: int, members: list[str]) -> Topic:
    """Chapter ``n``: categories uneven (the first rare), every 7th pending, every 5th
    holding agent events, pairs created at the same time (ties broken by id)."""
    a, b = WORDS[n % len(WORDS)], WORDS[(n * 3 + 1) % len(WORDS)]
    when = T0 + timedelta(minutes=n // 2)
    return Topic(
        id=f"topic_{(n * 37) % 1000:04d}",
        namespace=NS,
        title=f"{a} notes {n}" + (f" {b}" if n % 3 else ""),
        description=f"about {b} and {a} " * (1 + n % 4),
        category=CATEGORIES[1 + n % (len(CATEGORIES) - 1)] if n % 29 else CATEGORIES[0],
        status="pending" if n % 7 == 0 else "ready",
        member_ids=members,
        has_agent=n % 5 == 0,
        created_at=when,
        updated_at=when,
    )


async def _catalog(memory: StrataGate) -> None:
    """260 chapters of 1–3 events, 3 of them stale; 90 events unfiled (10 agent ones)."""
    await new_space(memory, NS)
    ids = await add_events(memory, NS, 600, distinct=True)
    await add_events(memory, NS, 10, start=600, distinct=True, pool="agent")
    chapters, used = [], 0
    for n in range(CHAPTERS):
        size = 1 + n % 3
        chapters.append(_chapter(n, ids[used : used + size]))
        used += size

    def write(tx: TopicsTransaction) -> None:
        for topic in reversed(chapters):  # ties in time broken by id, not by insertion
            tx.save_topic(topic)
            cards = tx.visible_cards(NS, topic.member_ids)
            marks = ({c.id: "f" for c in cards}, {c.id: topic.category for c in cards})
            tx.set_members(topic, cards, marks)
        tx.mark_for_projection([chapters[k].member_ids[0] for k in (3, 40, 200)])

    await memory.storage.topics.write(write)
    await memory.topics.refile_unfiled()


def _materialised(
    tx: TopicsTransaction, weight: float, category: str | None, window: tuple[int, int], query: str
) -> Listing:
    """The listing as it was made: every shown chapter an entry, then counted and paged."""
    stale = stale_members(tx, NS)
    shown = [t for t in tx.load_topics(NS, members=True) if weight > 0 or not t.has_agent]
    entries = [catalog._entry(t, len(t.member_ids), t.id in stale) for t in shown]
    spare = catalog.fallback_counts(tx, NS, weight)
    totals = Counter(e.category for e in entries) + Counter(spare)
    firsts: dict[str, Entry] = {}
    for entry in entries:
        firsts.setdefault(entry.category, entry)
    for name in CATEGORIES:
        if name not in firsts and spare.get(name):
            firsts[name] = catalog._fallbacks(tx.fallback_rows(NS, weight, name, (1, 0)))[0]
    mine = [e for e in entries if category is None or e.category == category]
    offset, limit = window
    if query:
        found = tx.matching_fallbacks(NS, weight, category, query_tokens(query))
        ranked = rank_entries(query, [*mine, *catalog._fallbacks(found)])
        return Listing(len(ranked), ranked[offset : offset + limit], dict(totals), firsts)
    total = len(mine) + (spare.get(category, 0) if category else sum(spare.values()))
    page = mine[offset : offset + limit]
    if len(page) < limit:
        rows = tx.fallback_rows(
            NS, weight, category, (limit - len(page), max(0, offset - len(mine)))
        )
        page += catalog._fallbacks(rows)
    return Listing(total, page, dict(totals), firsts)


def _compared(tx: TopicsTransaction) -> int:
    compared = 0
    for weight in (1.0, 0.0):
        for category in [None, *CATEGORIES]:
            for query in ["", *QUERIES]:
                for window in WINDOWS:
                    args = (weight, category, window, query)
                    got = catalog.listing(tx, NS, weight, category, *window, query)
                    want = _materialised(tx, *args)
                    assert got == want, args
                    assert list(got.category_counts) == list(want.category_counts), args
                    assert list(got.firsts) == list(want.firsts), args
                    compared += bool(got.entries)
    return compared


async def test_a_windowed_listing_equals_every_chapter_materialised(memory: StrataGate) -> None:
    await _catalog(memory)
    assert await memory.storage.topics.read(lambda tx: len(stale_members(tx, NS))) == 3
    pages = await memory.storage.topics.read(_compared)
    assert pages > 100  # a category's pages past its chapters show none
    listing = await memory.storage.topics.read(
        lambda tx: catalog.listing(tx, NS, 1.0, None, 250, 20)
    )
    kinds = [e.is_fallback for e in listing.entries]
    assert kinds == [False] * 10 + [True] * 10  # the last chapters, then the fallbacks
    assert {e.status for e in listing.entries[:10]} == {"ready", "pending"}


def _ranked_pages(tx: TopicsTransaction) -> int:
    """``_compared`` for the queries only (the path through the word index)."""
    compared = 0
    for weight in (1.0, 0.0):
        for category in [None, *CATEGORIES]:
            for query in [*QUERIES, "topic pending update", "harbor zebra", "斑马 港口"]:
                for window in WINDOWS[:4]:
                    got = catalog.listing(tx, NS, weight, category, *window, query)
                    assert got == _materialised(tx, weight, category, window, query), query
                    compared += bool(got.entries)
    return compared


def _rewritten(tx: TopicsTransaction) -> None:
    """Chapters written as a projection does: renamed (new words, one Chinese), moved to
    another category, made agent, cleared to pending, and a new one after the others."""
    topics = tx.load_topics(NS, members=True)
    for n, topic in enumerate(topics[:12]):
        changed: dict[str, object] = {"title": f"{topic.title} zebra"}
        changed["description"] = "harbor 斑马 港口 " * n
        if n % 3 == 1:
            changed["category"] = CATEGORIES[0]
        if n % 4 == 2:
            changed["has_agent"] = True
        tx.save_topic(topic.model_copy(update=changed))
    for topic in topics[20:24]:
        tx.clear_language(topic.id, "2026-01-02T00:00:00+00:00")
    last = topics[-1]
    moved = {"id": "topic_zebra", "title": "zebra kiln", "created_at": T0 + timedelta(days=9)}
    tx.save_topic(last.model_copy(update=moved))


def _emptied(tx: TopicsTransaction) -> None:
    """A chapter emptied and deleted, as a sync does: the chapters after it move up."""
    topic = tx.load_topics(NS, members=True)[30]
    tx.drop_members(topic.id, topic.member_ids)
    assert tx.delete_empty_topics(NS) >= 1


def _patched_as_built(tx: TopicsTransaction) -> None:
    """The kept index patched by the writes is the index built from every chapter."""
    patched, built = chapter_index.current(tx, NS), chapter_index.build(tx.indexed_texts(NS))
    assert (patched.texts, patched.agent, patched.docs) == (built.texts, built.agent, built.docs)
    assert patched.places == built.places
    assert {t: sorted(p) for t, p in patched.postings.items()} == built.postings
    assert {k: v for k, v in patched.sizes.items() if v != (0, 0)} == built.sizes


async def test_a_ranked_listing_follows_every_chapter_write(memory: StrataGate) -> None:
    """The word index a query ranks through is kept between reads, patched after a few
    chapters are written and built again once one is deleted (by any process: the token
    is the database's), never stale."""
    await _catalog(memory)
    topics = memory.storage.topics
    assert await topics.read(_ranked_pages) > 50
    kept = [await topics.read(lambda tx: chapter_index.current(tx, NS)) for _ in range(2)]
    assert kept[0] is kept[1]  # no chapter written between: the same index
    await topics.write(_rewritten)
    rows = await topics.read(lambda tx: tx.indexed_texts(NS))
    assert 12 < len(chapter_index._changed(kept[0], rows) or []) <= 17  # patched, not built
    assert await topics.read(lambda tx: chapter_index.current(tx, NS)) is not kept[0]
    await topics.read(_patched_as_built)
    assert await topics.read(_ranked_pages) > 50
    zebra = await topics.read(lambda tx: catalog.listing(tx, NS, 1.0, None, 0, 50, "zebra"))
    assert zebra.total >= 6  # the renamed chapters neither pending nor stale, the new one
    assert {e.is_fallback for e in zebra.entries} == {False}
    await topics.write(_emptied)
    rows = await topics.read(lambda tx: tx.indexed_texts(NS))
    assert chapter_index._changed(chapter_index.build(rows[:-1]), rows[:-1]) == []
    assert chapter_index._changed(kept[0], rows) is None  # the places moved: built anew
    await topics.read(_patched_as_built)
    assert await topics.read(_ranked_pages) > 50


async def test_a_book_window_equals_the_whole_book(memory: StrataGate) -> None:
    """The topics page's window of the book (placed through the chapter order's index,
    counted in SQL) is that slice of the whole book: ties in time, agent chapters."""
    await _catalog(memory)
    await memory.storage.topics.read(_books)


def _books(tx: TopicsTransaction) -> None:
    for weight in (1.0, 0.0):
        whole = catalog.book(tx, NS, weight)
        listed = sum(not chapter["hidden"] for chapter in whole["chapters"])
        for offset, count in [(0, 20), (13, 20), (250, 20), (300, 5), (0, 0)]:
            got = catalog.book(tx, NS, weight, window=(offset, count))
            assert got["chapters"] == whole["chapters"][offset : offset + count]
            assert (got["chapterCount"], got["listedChapters"]) == (CHAPTERS, listed)
