"""How fast event search would be with its index held in the process: a measured ceiling.

    PYTHONPATH=. .venv/bin/python benchmarks/event_index_ceiling.py --keep /tmp/s500k.db

Not a feature: an experiment for the design question #29 leaves open (p50 ≤ 2× bm25s). On
the search-scale corpus (``search_scale.py --keep``, opened once by the engine), the reads
event search makes per query (the prefilter's term counts, the impact index's postings,
the candidates' visibility, their stored documents, the supersession links) are answered
from arrays and dicts loaded once, the cards of the page and their history still read by
SQL. The engine's own ``search_with_history`` runs on top, so its ranking, folding and
paging decide, and every page (ids and scores) is compared with the engine's answer to the
same question. The engine, the held reads and bm25s (``scale_bm25s``, over the visible
event texts) are timed in the same run, the first two alternating question by question.

What the held reads do not have is what a product needs: staying current while other
processes write (a token every write to the events or their index draws anew, read once a
search) and a compact form: loaded here in ~6.5 s, they add ~290 MB to the process at 100k
events (measured in session 18, the postings then int64 rows of every space, 123 MB; the
stored documents as Python dicts), where narrow arrays (int32 pks, uint16 counts and
lengths, term ids) would take tens of MB. The postings are now read from the chunks the
engine keeps (``event_chunks``), the space's own.
"""

import argparse
import asyncio
import json
import sqlite3
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from benchmarks.scale_bm25s import Baseline, measure
from benchmarks.scale_corpus import SPACE, corpus_queries, corpus_texts
from benchmarks.scale_stats import summary
from stratagate_plugin.core.events.cards import EventCard
from stratagate_plugin.core.events.documents import EVENT_RULES
from stratagate_plugin.core.events.ranking import EventHit, EventSearch
from stratagate_plugin.core.events.search import search_with_history
from stratagate_plugin.core.events.storage import Candidate, CandidateQuery, SearchCandidates
from stratagate_plugin.core.memory import StrataGate
from stratagate_plugin.core.retrieval.query import parse_query
from stratagate_plugin.core.store import event_chunks, event_rows
from stratagate_plugin.core.store.event_documents import parsed_counts
from stratagate_plugin.core.store.event_term_index import Phrase, fts5_scored
from stratagate_plugin.core.store.readers import in_snapshot
from stratagate_plugin.core.store.search_index import (
    POSTING_BUDGET,
    document_stamp,
    prefilter_terms,
)

VISIBLE = ("active", "superseded")
POOLS = ("conversation", "agent")
State = tuple[int, str, str, str, str | None, str]  # pk, id, pool, status, superseded_by, at
Postings = npt.NDArray[np.int64]  # rows of (pk, count, length, pool index in space or -1)


class HeldIndex:
    """Every read event search makes, loaded once from one snapshot of the file."""

    def __init__(self, raw: sqlite3.Connection, space: str) -> None:
        started = time.perf_counter()
        self.totals: tuple[int, int] = raw.execute(
            "SELECT rows, tokens FROM event_term_totals"
        ).fetchone()
        self.rows_of = event_chunks.term_rows(raw)
        self.postings = _postings(raw, space)
        self.states: dict[int, State] = {}
        self.pk_of: dict[str, int] = {}
        for row in raw.execute(
            "SELECT pk, id, pool, status, superseded_by, updated_at FROM event_states"
        ):
            self.states[row[0]] = tuple(row)
            self.pk_of[row[1]] = row[0]
        self.documents = {
            pk: (stamp, int(length), parsed_counts(text))
            for pk, stamp, length, text in raw.execute(
                "SELECT pk, stamp, length, counts_json FROM event_documents"
            )
        }
        self.load_s = time.perf_counter() - started

    def count(self, term: str) -> int:
        """What the prefilter counts: the FTS rows holding ``term``, up to its budget + 1."""
        return min(self.rows_of.get(term, 0), POSTING_BUDGET + 1)


def _postings(raw: sqlite3.Connection, space: str) -> dict[str, Postings]:
    """Each term's postings in ``space`` as one array, its pools' chunks in pk order (the
    engine's ``event_chunks.read`` columns)."""
    chunks: dict[str, list[Postings]] = {}
    rows = raw.execute(
        "SELECT term, pool, pks, counts, lengths FROM event_postings WHERE namespace = ? "
        "ORDER BY term, pool, chunk",
        (space,),
    )
    for term, pool, pks, counts, lengths in rows:
        found = np.empty((len(pks) // 8, 4), np.int64)
        found[:, 0] = np.frombuffer(pks, "<i8")
        found[:, 1] = np.frombuffer(counts, "<u4")
        found[:, 2] = np.frombuffer(lengths, "<u4")
        found[:, 3] = POOLS.index(pool) if pool in POOLS else -1
        chunks.setdefault(term, []).append(found)
    return {term: np.concatenate(parts) for term, parts in chunks.items()}


class HeldReader:
    """``EventsReader`` for plain queries from a ``HeldIndex``; cards read by SQL."""

    def __init__(self, held: HeldIndex, raw: sqlite3.Connection) -> None:
        self.held, self.raw = held, raw

    def candidates(self, space: str, query: CandidateQuery) -> SearchCandidates:
        rows = [row for pks in self._ranked(query) for row in self._first_visible(pks, query.cap)]
        unique = list({row[1]: row for row in rows}.values())
        wanted = sorted(set(query.tokens))
        return SearchCandidates([self._candidate(row, wanted) for row in unique], 0)

    def _ranked(self, query: CandidateQuery) -> list[list[int]]:
        """Per pool, the pks in the engine's prefilter order (``event_search_rows``)."""
        counts = {token: self.held.count(token) for token in dict.fromkeys(query.tokens)}
        chosen, total = prefilter_terms(counts)
        if not chosen:
            return []
        empty = np.empty((0, 4), np.int64)
        if total > POSTING_BUDGET:  # one common term: its newest first
            found = self.held.postings.get(chosen[0], empty)
            return [found[found[:, 3] == n, 0][::-1].tolist() for n in range(len(query.pools))]
        ordered = [self.held.postings.get(token, empty) for token in chosen]
        rows_of = [self.held.rows_of[token] for token in chosen]
        held = zip(ordered, rows_of, strict=True)
        phrases = [Phrase(f[:, 0], f[:, 1], f[:, 2], n) for f, n in held]
        pks, score, places = fts5_scored(phrases, *self.held.totals)
        owner = np.full(len(pks), -1)
        for found, at in zip(ordered, places, strict=True):
            owner[at] = found[:, 3]
        order = np.lexsort((pks, -score))
        pks, owner = pks[order], owner[order]
        return [pks[owner == n].tolist() for n in range(len(query.pools))]

    def _first_visible(self, pks: Sequence[int], cap: int) -> list[State]:
        kept: list[State] = []
        for pk in pks:
            state = self.held.states.get(pk)
            if state is not None and state[3] in VISIBLE:
                kept.append(state)
                if len(kept) >= cap:
                    break
        return kept

    def _candidate(self, row: State, wanted: list[str]) -> Candidate:
        pk, event_id, pool, status, superseded_by, updated_at = row
        stored = self.held.documents.get(pk)
        current = document_stamp(updated_at, EVENT_RULES.document_version)
        if stored is None or stored[0] != current:
            raise SystemExit(f"event {event_id} has no current stored document: reopen the file")
        counts = stored[2]
        document = ({token: counts[token] for token in wanted if token in counts}, stored[1])
        newer = superseded_by if status == "superseded" else None
        return Candidate(event_id, pool, status, newer, None, document, None)

    def links(self, space: str, event_ids: Sequence[str]) -> dict[str, str | None]:
        found: dict[str, str | None] = {}
        for event_id in event_ids:
            state = self.held.states.get(self.held.pk_of.get(event_id, -1))
            if state is not None and state[3] in VISIBLE:
                found[event_id] = state[4] if state[3] == "superseded" else None
        return found

    def visible_cards(self, space: str, event_ids: Sequence[str]) -> list[EventCard]:
        return event_rows.visible_cards(self.raw, space, event_ids)


def page_key(hits: Sequence[EventHit]) -> list[tuple[str, float, list[str]]]:
    return [(hit.card.id, hit.rank_score, [card.id for card in hit.history]) for hit in hits]


async def measure_both(path: Path, queries: Sequence[str], rounds: int) -> dict[str, Any]:
    """The engine's event search and the held reads over the same questions, alternating."""
    raw = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    raw.row_factory = sqlite3.Row
    held = in_snapshot(raw, lambda snapshot: HeldIndex(snapshot, SPACE))
    reader = HeldReader(held, raw)
    memory = await StrataGate.open(path)
    weight = memory.config.agent_memory_weight
    loop = asyncio.get_running_loop()

    async def held_search(query: str) -> list[EventHit]:
        request = EventSearch(parse_query(query).terms, agent_weight=weight)
        search = lambda _: search_with_history(reader, SPACE, request)  # noqa: E731
        return await loop.run_in_executor(None, in_snapshot, raw, search)

    same = 0
    for query in queries:
        engine = await memory.events.search(SPACE, query, track_retrieval=False)
        same += page_key(engine) == page_key(await held_search(query))
    timings: dict[str, list[float]] = {"engine": [], "held": []}
    for _ in range(rounds):
        for query in queries:
            for name, run in (("engine", memory.events.search), ("held", None)):
                started = time.perf_counter()
                if run is None:
                    await held_search(query)
                else:
                    await run(SPACE, query, track_retrieval=False)
                timings[name].append((time.perf_counter() - started) * 1000)
    await memory.close()
    raw.close()
    return {
        "same_pages": same,
        "questions": len(queries),
        "held_load_s": round(held.load_s, 1),
        "engine": summary(timings["engine"]),
        "held": summary(timings["held"]),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--keep", type=Path, required=True, help="the search-scale corpus")
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    if not args.keep.exists():
        raise SystemExit(f"no corpus at {args.keep}: build it with search_scale.py --keep")
    queries = corpus_queries(args.seed, args.queries)
    result = asyncio.run(measure_both(args.keep, queries, args.rounds))
    bm25s = measure(Baseline(corpus_texts(args.keep)[0]), queries)
    result["bm25s"] = {key: bm25s[key] for key in ("p50_ms", "p95_ms", "method")}
    print_table(result)
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))


def print_table(result: Mapping[str, Any]) -> None:
    base = result["bm25s"]["p50_ms"]
    print(f"same page, scores and history: {result['same_pages']}/{result['questions']}")
    print(f"held reads loaded in {result['held_load_s']} s")
    print(f"{'event search':<14}{'p50 ms':>9}{'p95 ms':>9}{'× bm25s p50':>13}")
    for name in ("engine", "held", "bm25s"):
        row = result[name]
        print(f"{name:<14}{row['p50_ms']:>9}{row['p95_ms']:>9}{row['p50_ms'] / base:>13.2f}")


if __name__ == "__main__":
    main()
