"""``bm25_rank_counted`` scores each document over the query terms it holds: the same floats
and order as walking every query term for every document (the former loop, kept here)."""

from collections.abc import Mapping, Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from stratagate_plugin.core.retrieval.bm25 import bm25_rank_counted, bm25_score, idf

Docs = Mapping[str, tuple[Mapping[str, int], int]]


def walked(query: Sequence[str], docs: Docs) -> list[tuple[str, float]]:
    terms = list(dict.fromkeys(query))
    if not terms or not docs:
        return []
    avgdl = sum(length for _, length in docs.values()) / len(docs) or 1.0
    weights = {t: idf(len(docs), sum(1 for c, _ in docs.values() if t in c)) for t in terms}
    scored = []
    for doc_id, (tf, length) in docs.items():
        score = bm25_score(tf, length, weights, avgdl)
        if score > 0:
            scored.append((doc_id, score))
    return sorted(scored, key=lambda item: (-item[1], item[0]))


TERMS = st.sampled_from([f"w:t{n}" for n in range(12)])
DOCUMENT = st.tuples(
    st.dictionaries(TERMS, st.integers(0, 9), max_size=8), st.integers(0, 300)
).map(lambda doc: (doc[0], max(doc[1], sum(doc[0].values()))))


@settings(max_examples=300, deadline=None)
@given(st.lists(TERMS, max_size=14), st.dictionaries(st.text("abcdef", max_size=3), DOCUMENT))
def test_bm25_counted_equals_walking_every_term(query: list[str], docs: Docs) -> None:
    assert bm25_rank_counted(query, docs) == walked(query, docs)
