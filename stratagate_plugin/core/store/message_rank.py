"""FTS5's ``ORDER BY rank`` of the raw channel's pre-filtered terms, from the impact index.

A plain raw search asks FTS5 for a space's best ``cap`` sealed messages on the query's
rarest terms (``search_index.prefilter``), and FTS5 scores every match a row at a time:
most of the search at 500k messages. The message impact index (``term_index``) holds what
its bm25 reads: each term's postings in the space (count, message length), the messages
holding it in every space (``term_counts``, summed) and the table's totals
(``message_index_stats``), written in the same transactions as the FTS rows. So the same
ranking is computed in bulk, with FTS5's arithmetic in its order (``fts5_scored``, shared
with the event index), and ties go to the lower rowid as FTS5's sorter leaves them: the
same messages in the same order.
On PostgreSQL this replaces ``ts_rank``, so both backends find the same candidates.

Exact or nothing: where the index cut a count or a length (``LENGTH_CAP``), ``None``, and
the caller asks FTS5.
"""

import json
import sqlite3
from collections.abc import Sequence

import numpy as np

from ..retrieval.storage import LENGTH_CAP
from . import term_index
from .event_term_index import Phrase, fts5_scored


def ranked_rowids(
    raw: sqlite3.Connection, space: str, terms: Sequence[str], cap: int
) -> list[int] | None:
    """The ``fts_rowid``s of ``space``'s best ``cap`` messages holding any of ``terms``, in
    the order of FTS5's ``ORDER BY rank`` for ``term OR term …`` (the terms in that order);
    ``None`` when the index cannot say it exactly."""
    phrases = list(dict.fromkeys(terms))
    found = term_index.postings(raw, space, phrases)
    held = [found[phrase] for phrase in phrases if phrase in found]
    if not held:
        return []
    if any(int(p.counts.max()) >= LENGTH_CAP or int(p.lengths.max()) >= LENGTH_CAP for p in held):
        return None
    n_rows, n_tokens, n_hits = _statistics(raw, phrases)
    if n_rows <= 0:
        return None
    scored = [
        Phrase(found[p].rowids, found[p].counts, found[p].lengths, n_hits[p])
        for p in phrases
        if p in found
    ]
    rowids, score, _ = fts5_scored(scored, n_rows, n_tokens)
    order = np.lexsort((rowids, -score))[:cap]
    return [int(rowid) for rowid in rowids[order]]


def _statistics(raw: sqlite3.Connection, phrases: Sequence[str]) -> tuple[int, int, dict[str, int]]:
    """The table's messages and tokens, and the messages holding each phrase (every space):
    one statement, the totals its row without a term."""
    rows = raw.execute(
        "SELECT NULL, coalesce(sum(messages), 0), coalesce(sum(tokens), 0) "
        "FROM message_index_stats UNION ALL "
        "SELECT c.term, sum(c.messages), 0 FROM namespaces n JOIN term_counts c "
        "ON c.namespace = n.namespace WHERE c.term IN (SELECT value FROM json_each(?)) "
        "GROUP BY c.term",
        (json.dumps(list(phrases)),),
    ).fetchall()
    [totals] = [row for row in rows if row[0] is None]
    counted = {str(row[0]): int(row[1]) for row in rows if row[0] is not None}
    return int(totals[1]), int(totals[2]), counted
