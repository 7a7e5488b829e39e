"""The raw channel's documents and BM25 statistics from what storage read.

Messages are tokenised here (with their speaker's ``Name:`` label); with an index, the
sealed corpus's counts come from ``RetrievalStorage.term_statistics`` for the terms that
occur in the loaded messages (no other term can score) and the open tails' are added;
without one, every message was loaded and the statistics are counted from them.
"""

from collections.abc import Sequence

from ..text.search_terms import tokenize
from .raw_channel import ChannelDoc, CorpusStats, added_stats, scan_stats, speaker_label
from .storage import ChannelMessage, ChannelQuery, ChannelRows, RetrievalReader


def channel_doc(message: ChannelMessage) -> ChannelDoc:
    return ChannelDoc(
        message.id,
        message.thread_id,
        message.block_id,
        message.position,
        message.block_sequence,
        tokenize(message.content),
        tuple(tokenize(speaker_label(message.content))),
        message.composed_from_memory,
    )


def channel_docs(
    reader: RetrievalReader, namespace: str, query: ChannelQuery
) -> tuple[list[ChannelDoc], CorpusStats]:
    """The loaded messages' documents and the BM25 statistics they are scored with."""
    rows = reader.channel_messages(namespace, query)
    terms = [*query.terms, *query.weak]
    docs, tails = loaded_docs(rows)
    if not rows.indexed:
        return docs, scan_stats(docs, terms)
    present = present_terms(docs, terms)
    sealed = reader.term_statistics(namespace, present, matched_blocks(rows))
    return docs, with_tails(sealed, tails, present)


def loaded_docs(rows: ChannelRows) -> tuple[list[ChannelDoc], list[ChannelDoc]]:
    """(every loaded message's document: matched, neighbours, tails; the tails' alone)."""
    tails = [channel_doc(message) for message in rows.tails]
    return [channel_doc(m) for m in [*rows.matched, *rows.neighbours]] + tails, tails


def present_terms(docs: Sequence[ChannelDoc], terms: Sequence[str]) -> list[str]:
    """The query's terms (once each, in order) that occur in the loaded messages."""
    loaded = {token for doc in docs for token in doc.tokens}
    return [term for term in dict.fromkeys(terms) if term in loaded]


def matched_blocks(rows: ChannelRows) -> list[str]:
    """The sealed blocks of the matched messages, whose lengths the block votes need."""
    return sorted({message.block_id for message in rows.matched})


def with_tails(
    sealed: CorpusStats, tails: Sequence[ChannelDoc], terms: Sequence[str]
) -> CorpusStats:
    """The index's statistics plus the open tails' (the index does not hold them)."""
    return added_stats(sealed, scan_stats(tails, terms))
