"""Source precision of derived events (issue 23): do events cite the words that state them?

    .venv/bin/python benchmarks/source_precision.py DB [DB ...]

Reads databases kept by ``stratagate bench locomo --db FILE`` (or any StrataGate file) and
prints, per file: the events, the cited messages stated by a person (a user message, or
one labelled ``Name: …`` whatever its role, as LoCoMo records its second speaker), the
**source precision** — the share of those that share a content term with their event
(``events.source_check.shares_content``: a stemmed word or Han pair, or two Han
characters; the speaker label not counted) — and the events whose only sources are
unnamed assistant messages.
"""

import sqlite3
import sys
from pathlib import Path

from stratagate_plugin.core.events.source_check import content_terms, shares_content
from stratagate_plugin.core.llm.offline.text import split_speaker


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


def main(argv: list[str]) -> int:
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
