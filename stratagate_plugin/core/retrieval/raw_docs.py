"""The raw channel's documents and BM25 statistics from what storage read.

With an impact index, the candidates are the best BM25 rowids over the query terms'
postings (``impact.best_rowids``), read with their thread neighbours; a sealed message's
document is then its query terms as its postings count them and its stored length, so
no sealed message is tokenised at query time (only its ``Name:`` label is). The sealed
corpus's counts come from ``RetrievalReader.term_statistics`` (read once, for the query's
terms; the scoring keeps those that occur in the loaded messages, as no other term can
score) and the open tails' are added. Without an impact index (no FTS5 in the SQLite
build: the index is built wherever FTS5 is) every sealed message is read and tokenised,
and the statistics are counted from them.
"""

from collections.abc import Mapping, Sequence
from dataclasses import replace
from functools import lru_cache

from ..text.search_terms import tokenize
from .impact import best_rowids, posted_lengths, term_counts
from .raw_channel import ChannelDoc, CorpusStats, added_stats, scan_stats, speaker_label
from .storage import ChannelMessage, ChannelQuery, RetrievalReader, TermPostings

LABEL_CACHE = 1024


def channel_doc(message: ChannelMessage, counted: Mapping[str, int] | None = None) -> ChannelDoc:
    """The message's document: tokenised, or (``counted``: its query terms' counts from
    the impact index) those terms with its stored length."""
    if counted is None:
        tokens, length = tokenize(message.content), -1
    else:
        tokens = [term for term, count in counted.items() for _ in range(count)]
        length = message.length
    return ChannelDoc(
        message.id,
        message.thread_id,
        message.block_id,
        message.position,
        message.block_sequence,
        tokens,
        label_tokens(speaker_label(message.content)),
        message.composed_from_memory,
        length,
    )


@lru_cache(maxsize=LABEL_CACHE)
def label_tokens(label: str) -> tuple[str, ...]:
    """A ``Name:`` label's tokens (a space has few speakers: each is tokenised once)."""
    return tuple(tokenize(label)) if label else ()


def channel_docs(
    reader: RetrievalReader, space: str, query: ChannelQuery
) -> tuple[list[ChannelDoc], CorpusStats]:
    """The loaded messages' documents and the BM25 statistics they are scored with."""
    terms = [*query.terms, *query.weak]
    postings = None if query.scan else reader.term_postings(space, terms)
    if postings is not None:
        return impact_docs(reader, space, query, postings)
    tails = [channel_doc(m) for m in reader.tail_messages(space, query.current_thread)]
    docs = [channel_doc(message) for message in reader.sealed_messages(space)] + tails
    return docs, scan_stats(docs, terms)


def impact_docs(
    reader: RetrievalReader,
    space: str,
    query: ChannelQuery,
    postings: Mapping[str, TermPostings],
) -> tuple[list[ChannelDoc], CorpusStats]:
    """Candidates from the impact index: up to ``cap`` on the query's terms, up to
    ``weak_cap`` more on its weak ones, their neighbours, and every other open tail."""
    terms = list(dict.fromkeys([*query.terms, *query.weak]))
    every = reader.term_statistics(space, terms, [])  # read once: ranks, then scores
    strong = best_rowids(postings, query.terms, every, query.cap)
    weak = best_rowids(postings, query.weak, every, query.weak_cap, leave_out=strong)
    chosen = [*strong, *weak]
    around = query.context_cap or len(chosen)
    known = posted_lengths(postings, chosen)  # every match's, bar a cut one: not read again
    matched, neighbours = reader.indexed_messages(space, chosen, query.reach, around, known)
    loaded = [*matched, *neighbours]
    counts = term_counts(postings, [m.rowid for m in loaded])
    tails = [channel_doc(m) for m in reader.tail_messages(space, query.current_thread)]
    docs = [channel_doc(m, counts.get(m.rowid, {})) for m in loaded] + tails
    present = present_terms(docs, terms)
    lengths = reader.block_lengths(sorted({message.block_id for message in matched}))
    return docs, with_tails(only_terms(every, present, lengths), tails, present)


def only_terms(stats: CorpusStats, terms: Sequence[str], lengths: dict[str, int]) -> CorpusStats:
    """``stats`` of ``terms`` alone, with these block lengths."""
    return replace(
        stats,
        message_df={term: stats.message_df[term] for term in terms},
        block_df={term: stats.block_df[term] for term in terms},
        block_lengths=lengths,
    )


def present_terms(docs: Sequence[ChannelDoc], terms: Sequence[str]) -> list[str]:
    """The query's terms (once each, in order) that occur in the loaded messages."""
    loaded = {token for doc in docs for token in doc.tokens}
    return [term for term in dict.fromkeys(terms) if term in loaded]


def with_tails(
    sealed: CorpusStats, tails: Sequence[ChannelDoc], terms: Sequence[str]
) -> CorpusStats:
    """The index's statistics plus the open tails' (the index does not hold them)."""
    return added_stats(sealed, scan_stats(tails, terms))
