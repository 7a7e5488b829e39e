"""The topic catalog's reads on a projected corpus (#29): identical outputs and CPU per call.

``dump DB OUT``: ``catalog`` and ``directory`` outputs (queries of ``corpus_queries(7,
100)``, every category, offsets past the chapters) as JSON, to ``cmp`` two versions.
``time DB``: CPU ms per call of each read, 10 calls each, as one JSON line.
Run each version on its own copy of the database (the reads may re-file entries).
"""

import asyncio
import json
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

from benchmarks.scale_corpus import corpus_queries
from stratagate_plugin.core.memory import StrataGate
from stratagate_plugin.core.topics.categories import CATEGORIES

SPACE = "bench"


async def dump(memory: StrataGate) -> dict[str, Any]:
    found: dict[str, Any] = {"directory": await memory.topics.directory(SPACE)}
    catalog = memory.topics.catalog
    for category in [None, *CATEGORIES]:
        for offset in (0, 20, 7000, 7030):
            found[f"{category}|{offset}"] = await catalog(SPACE, None, category, offset, 20)
    for n, query in enumerate(corpus_queries(7, 100)[:30]):
        for offset in (0, 20):
            found[f"q{n}|{offset}"] = await catalog(SPACE, query, None, offset, 20)
        found[f"q{n}|word"] = await catalog(SPACE, query.split()[-1], None, 0, 20)
        for category in CATEGORIES if n < 6 else []:
            found[f"q{n}|{category}"] = await catalog(SPACE, query, category, 0, 20)
    found["book"] = await memory.topics.book(SPACE, pending_limit=20, window=(0, 20))
    return found


async def timed(memory: StrataGate) -> dict[str, float]:
    catalog, queries = memory.topics.catalog, corpus_queries(7, 100)[1:11]
    calls: dict[str, Callable[[str], Awaitable[Any]]] = {
        "directory": lambda q: memory.topics.directory(SPACE),
        "catalog (no query)": lambda q: catalog(SPACE, None, None, 0, 20),
        "catalog (no query, offset 7000)": lambda q: catalog(SPACE, None, None, 7000, 20),
        "catalog (category)": lambda q: catalog(SPACE, None, "work", 20, 20),
        "catalog (query)": lambda q: catalog(SPACE, q, None, 0, 20),
        "catalog (1-word query)": lambda q: catalog(SPACE, q.split()[-1], None, 0, 20),
        "book (window 0,0)": lambda q: memory.topics.book(SPACE, 20, (0, 0)),
    }
    spent = {}
    for name, call in calls.items():
        await call(queries[0])  # warm
        start = time.process_time()
        for query in queries:
            await call(query)
        spent[name] = (time.process_time() - start) * 1000 / len(queries)
    return spent


async def main(mode: str, db: str, out: str = "") -> None:
    memory = await StrataGate.open(db)
    try:
        if mode == "dump":
            with open(out, "w") as f:
                json.dump(await dump(memory), f, indent=1, ensure_ascii=False)
        else:
            print(json.dumps(await timed(memory)))
    finally:
        await memory.close()


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:]))
