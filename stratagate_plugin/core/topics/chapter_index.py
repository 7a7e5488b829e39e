"""The directory's word index: a query ranks the chapters holding its words, not all of them.

BM25 over the shown entries (title ×4, description ×2: ``directory.rank_texts``) weighs a
word by how many of ALL shown entries hold it and a length by their average, so a query
used to read and count every chapter (~34 ms at 7,000 chapters). Here each space's chapters
are indexed once: each chapter's document as its entry shows it by its row (a pending one
the pending title), postings per word, and per (agent?, category) how many chapters there
are and their total length. A query then counts its words' postings over the shown
chapters, corrects for the stale chapters (shown as pending whatever their row says) and
adds the matching fallback entries: the same counts, the same sums in the same order, so
the same floats and the same order as ranking every entry.

An index is kept per space in this process and reused while the space's chapter token
(``TopicsTransaction.chapter_generation``, drawn anew by every write of a chapter row, in
any process) is the one it was built at; it is read in the caller's transaction, so what
it says is what that transaction sees. Once the token changed, it is patched where a few
chapters changed in place or came after the others (``rebuilt``), else built again.
"""

import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ..retrieval.bm25 import bm25_score, idf
from ..text.search_terms import query_tokens
from .directory import entry_document
from .model import PENDING_TITLE
from .storage import ChapterText, TopicsTransaction

SPACES_KEPT = 8  # spaces whose index a process keeps (the least recently used goes)
MOST_PATCHED = 64  # chapters changed since the kept index that are patched into it
Document = tuple[Mapping[str, int], int]  # (token counts, length)
Key = tuple[int, int]  # (0, chapter place) or (1, fallback place): the listing's order


@dataclass
class ChapterIndex:
    """One space's chapters at one token: their rows, documents and word postings."""

    texts: list[ChapterText]
    agent: list[bool]
    docs: list[Document]
    places: dict[str, int] = field(default_factory=dict)
    postings: dict[str, list[int]] = field(default_factory=dict)
    sizes: dict[tuple[bool, str], tuple[int, int]] = field(default_factory=dict)


def build(rows: Sequence[tuple[ChapterText, bool]]) -> ChapterIndex:
    """The index of a space's chapters (``indexed_texts``' rows, in chapter order)."""
    texts = [text for text, _ in rows]
    docs = [_shown_document(text, False) for text in texts]
    index = ChapterIndex(texts, [agent for _, agent in rows], docs)
    for place, (text, (counts, length)) in enumerate(zip(texts, docs, strict=True)):
        index.places[text.id] = place
        for term in counts:
            index.postings.setdefault(term, []).append(place)
        key = (index.agent[place], text.category)
        count, total = index.sizes.get(key, (0, 0))
        index.sizes[key] = (count + 1, total + length)
    return index


def rebuilt(
    previous: ChapterIndex | None, rows: Sequence[tuple[ChapterText, bool]]
) -> ChapterIndex:
    """The index of ``rows`` made from the one kept before them: patched where a few
    chapters changed in their places or came after the others (a projection's commit:
    building all again cost more than the old ranking of every chapter), else built anew."""
    changed = _changed(previous, rows)
    if previous is None or changed is None:
        return build(rows)
    index = ChapterIndex(
        [text for text, _ in rows],
        [agent for _, agent in rows],
        list(previous.docs),
        dict(previous.places),
        dict(previous.postings),  # the lists a patch changes are copied, never changed
        dict(previous.sizes),
    )
    for place in changed:
        if place < len(previous.texts):
            _unlisted(index, place, previous)
        _listed(index, place)
    return index


def _changed(
    previous: ChapterIndex | None, rows: Sequence[tuple[ChapterText, bool]]
) -> list[int] | None:
    """The places whose chapter changed or is new, when every chapter kept is still in its
    place and they are few (``MOST_PATCHED``); ``None`` otherwise."""
    if previous is None or len(rows) < len(previous.texts):
        return None
    old = range(len(previous.texts))
    changed = [p for p in old if rows[p] != (previous.texts[p], previous.agent[p])]
    if any(rows[p][0].id != previous.texts[p].id for p in changed):
        return None  # a chapter went or moved: the places after it shift
    changed += range(len(previous.texts), len(rows))
    return changed if len(changed) <= MOST_PATCHED else None


def _unlisted(index: ChapterIndex, place: int, previous: ChapterIndex) -> None:
    """The chapter kept at ``place`` taken out of the postings and sizes."""
    counts, length = previous.docs[place]
    for term in counts:
        left = [p for p in index.postings[term] if p != place]
        if left:
            index.postings[term] = left
        else:
            del index.postings[term]
    key = (previous.agent[place], previous.texts[place].category)
    count, total = index.sizes[key]
    index.sizes[key] = (count - 1, total - length)


def _listed(index: ChapterIndex, place: int) -> None:
    """The chapter now at ``place`` added: its document, postings and size."""
    text = index.texts[place]
    doc = _shown_document(text, False)
    if place < len(index.docs):
        index.docs[place] = doc
    else:
        index.docs.append(doc)
    index.places[text.id] = place
    for term in doc[0]:
        index.postings[term] = [*index.postings.get(term, ()), place]
    key = (index.agent[place], text.category)
    count, total = index.sizes.get(key, (0, 0))
    index.sizes[key] = (count + 1, total + doc[1])


def _shown_document(text: ChapterText, stale: bool) -> Document:
    """The document of the words a chapter's entry shows (``catalog._words``')."""
    if stale or text.status == "pending":
        return entry_document(PENDING_TITLE, "")
    return entry_document(text.title, text.description)


_KEPT: OrderedDict[str, tuple[int, ChapterIndex]] = OrderedDict()
_LOCK = threading.Lock()


def current(tx: TopicsTransaction, space: str) -> ChapterIndex:
    """The space's index as ``tx`` sees its chapters: the kept one while the token is the
    same, else made again from every chapter's row (``rebuilt``) and kept."""
    token = tx.chapter_generation(space)
    with _LOCK:
        kept = _KEPT.get(space)
    if token is not None and kept is not None and kept[0] == token:
        with _LOCK:
            _KEPT.move_to_end(space)
        return kept[1]
    index = rebuilt(kept[1] if kept else None, tx.indexed_texts(space))
    if token is not None:
        with _LOCK:
            _KEPT[space] = (token, index)
            _KEPT.move_to_end(space)
            while len(_KEPT) > SPACES_KEPT:
                _KEPT.popitem(last=False)
    return index


@dataclass(frozen=True)
class Shown:
    """Which chapters an entry list shows: agent ones or not, one category or all."""

    agent: bool
    category: str | None

    def holds(self, index: ChapterIndex, place: int) -> bool:
        if index.agent[place] and not self.agent:
            return False
        return self.category is None or index.texts[place].category == self.category


def ranked(
    index: ChapterIndex,
    query: str,
    shown: Shown,
    stale: Mapping[str, object],
    fallbacks: Sequence[tuple[str, str]],
) -> list[Key]:
    """The shown chapters and ``fallbacks`` (title, description) matching ``query``, best
    first, ties in the listing's order: ``directory.rank_texts`` over every shown chapter's
    entry then the fallbacks, read from the postings of the query's words."""
    terms = list(dict.fromkeys(query_tokens(query)))
    docs = _candidates(index, terms, shown, stale, fallbacks)
    count, total = _collection(index, shown, stale, fallbacks)
    if not terms or not count:
        return []
    avgdl = total / count or 1.0
    df = dict.fromkeys(terms, 0)
    for counts, _ in docs.values():
        for term in counts:
            if term in df:
                df[term] += 1
    weights = {t: idf(count, df[t]) for t in terms}
    scored = [(key, _score(doc, weights, avgdl)) for key, doc in docs.items()]
    return [key for key, score in sorted(scored, key=_best) if score > 0]


def _best(item: tuple[Key, float]) -> tuple[float, Key]:
    return -item[1], item[0]


def _score(doc: Document, weights: dict[str, float], avgdl: float) -> float:
    """``bm25_rank_counted``'s score of one document: the query terms it holds, summed in
    the query's order (that function only narrows the terms first, the same sum)."""
    return bm25_score(doc[0], doc[1], weights, avgdl)


def _candidates(
    index: ChapterIndex,
    terms: Sequence[str],
    shown: Shown,
    stale: Mapping[str, object],
    fallbacks: Sequence[tuple[str, str]],
) -> dict[Key, Document]:
    """Every shown entry holding a query term, with the document its entry shows: the
    postings' chapters (a stale one only if the pending title holds a term), the stale
    chapters, the fallbacks. A document without a term counts for no term's frequency."""
    wanted = set(terms)
    places = {p for t in terms for p in index.postings.get(t, ()) if index.texts[p].id not in stale}
    places |= {p for p in _stale_places(index, shown, stale)}
    docs: dict[Key, Document] = {}
    for place in places:
        if shown.holds(index, place):
            doc = _shown_document(index.texts[place], index.texts[place].id in stale)
            if wanted.intersection(doc[0]):
                docs[(0, place)] = doc
    for place, words in enumerate(fallbacks):
        doc = entry_document(*words)
        if wanted.intersection(doc[0]):
            docs[(1, place)] = doc
    return docs


def _stale_places(index: ChapterIndex, shown: Shown, stale: Mapping[str, object]) -> list[int]:
    """The places of the shown chapters that are stale (their rows may still say ready)."""
    found = (index.places.get(topic_id) for topic_id in stale)
    return [p for p in found if p is not None and shown.holds(index, p)]


def _collection(
    index: ChapterIndex,
    shown: Shown,
    stale: Mapping[str, object],
    fallbacks: Sequence[tuple[str, str]],
) -> tuple[int, int]:
    """How many entries are shown and their total length: the shown chapters' sizes by
    their rows, each stale one's length as pending instead, then the fallbacks'."""
    count = total = 0
    for (agent, category), (n, length) in index.sizes.items():
        if (shown.agent or not agent) and shown.category in (None, category):
            count, total = count + n, total + length
    for place in _stale_places(index, shown, stale):
        total += _shown_document(index.texts[place], True)[1] - index.docs[place][1]
    for words in fallbacks:
        total += entry_document(*words)[1]
    return count + len(fallbacks), total
