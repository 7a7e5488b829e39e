"""What the source check does to a careless model (issue 23): precision of derived events
before and after the check.

    .venv/bin/python benchmarks/source_check_careless.py DB [DB ...]
    .venv/bin/python benchmarks/source_check_careless.py --whole-block DB [DB ...]

Reads databases kept by ``stratagate bench locomo --db FILE`` (or any StrataGate file) and
prints, per file: the events, the cited messages stated by a person (a user message, or
one labelled ``Name: …`` whatever its role, as LoCoMo records its second speaker), the
**source precision** — the share of those that share a content term with their event
(``events.source_check.shares_content``: a stemmed word or Han pair, or two Han
characters; the speaker label not counted) — and the events whose only sources are
unnamed assistant messages.

``--whole-block`` stands in for a careless model: each block's offline cards are made to
cite every message of their block, then the source check (``events.source_check``) runs
as derivation runs it; it prints the precision before and after the check and what the
check dropped.
"""

import asyncio
import sqlite3
import sys
from pathlib import Path

from stratagate_plugin.core.events.source_check import (
    SourceDrops,
    check_sources,
    content_terms,
    shares_content,
)
from stratagate_plugin.core.llm.base import StructuredTask
from stratagate_plugin.core.llm.offline.model import OfflineModel
from stratagate_plugin.core.llm.offline.text import split_speaker
from stratagate_plugin.core.llm.tasks import EXTRACT_EVENT_CARDS, EventCardDraft, EventExtraction


def precision(path: Path) -> dict[str, float]:
    conn = sqlite3.connect(path)
    rows = conn.execute(
        "SELECT e.id, e.title, e.summary, m.role, m.content FROM events e "
        "JOIN event_sources s ON s.event_id = e.id JOIN messages m ON m.id = s.message_id "
        "WHERE e.status IN ('active', 'superseded')"
    ).fetchall()
    events = conn.execute(
        "SELECT COUNT(*) FROM events WHERE status IN ('active', 'superseded')"
    ).fetchone()[0]
    conn.close()
    cited = sharing = 0
    by_event: dict[str, list[bool]] = {}
    for event_id, title, summary, role, content in rows:
        speaker, body = split_speaker(content)
        person = role == "user" or speaker is not None
        by_event.setdefault(event_id, []).append(person)
        if person:
            cited += 1
            sharing += shares_content(content_terms(f"{title} {summary}"), content_terms(body))
    agent_only = sum(1 for people in by_event.values() if not any(people))
    return {
        "events": events,
        "person_sources": cited,
        "precision": sharing / cited if cited else 1.0,
        "agent_only_events": agent_only,
        "no_source_events": events - len(by_event),
    }


def cited_precision(drafts: list[EventCardDraft], by_id: dict[str, dict[str, str]]) -> float:
    cited = sharing = 0
    for draft in drafts:
        for message_id in draft.source_message_ids:
            speaker, body = split_speaker(by_id[message_id]["content"])
            if by_id[message_id]["role"] == "user" or speaker is not None:
                cited += 1
                terms = content_terms(f"{draft.title} {draft.summary}")
                sharing += shares_content(terms, content_terms(body))
    return sharing / cited if cited else 1.0


async def whole_block(path: Path) -> str:
    conn = sqlite3.connect(path)
    blocks = [
        row[0]
        for row in conn.execute(
            "SELECT id FROM blocks ORDER BY namespace, thread_id, thread_sequence"
        )
    ]
    model, drops = OfflineModel(), SourceDrops()
    careless: list[EventCardDraft] = []
    checked: list[EventCardDraft] = []
    by_id: dict[str, dict[str, str]] = {}
    for block in blocks:
        rows = conn.execute(
            "SELECT id, role, content, created_at FROM messages WHERE block_id = ? "
            "ORDER BY position",
            (block,),
        ).fetchall()
        messages = [
            dict(zip(("id", "role", "content", "created_at"), r, strict=True)) for r in rows
        ]
        by_id.update({m["id"]: m for m in messages})
        payload = {"target": {"messages": messages}, "timeline": [], "neighbors": []}
        task = StructuredTask(EXTRACT_EVENT_CARDS, EventExtraction, "", payload)
        found = (await model.complete(task)).events
        every = [m["id"] for m in messages]
        sloppy = [d.model_copy(update={"source_message_ids": every}) for d in found]
        kept, dropped = check_sources(sloppy, messages)
        careless += sloppy
        checked += kept
        drops.add(dropped)
    conn.close()
    return (
        f"{path} | {len(careless)} cards | precision citing the whole block "
        f"{cited_precision(careless, by_id):.3f} | after the check "
        f"{cited_precision(checked, by_id):.3f} ({len(checked)} cards) | {drops.note()}"
    )


def main(argv: list[str]) -> int:
    if argv[:1] == ["--whole-block"]:
        for name in argv[1:]:
            print(asyncio.run(whole_block(Path(name))))
        return 0
    print("database | events | person-stated sources | source precision | agent-only | none")
    for name in argv:
        found = precision(Path(name))
        print(
            f"{name} | {found['events']} | {found['person_sources']} | "
            f"{found['precision']:.3f} | {found['agent_only_events']} | "
            f"{found['no_source_events']}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
