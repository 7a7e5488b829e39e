"""Statements become events first (issue 26): how many labelled statements get an event card.

    PYTHONPATH=. .venv/bin/python benchmarks/statement_events.py \
        --data benchmarks/graph_sets/dev.json [--misses]

For every item of a labelled graph set (``benchmarks/graph_sets/README.md``) that expects an
edge or a fact, the offline model extracts event cards from its turns as one block (named
speakers recorded as ``Name: text``, the first one as the user, as ``graph_quality.py``
does). It prints, per language, the share of those items with at least one card citing one
of their turns, the share of person turns cited, and how many of the cards' participants
are labelled persons or aliases (the graph makes every participant a person).
"""

import argparse
import json
from collections import defaultdict
from collections.abc import Mapping
from datetime import UTC
from typing import Any

from stratagate_plugin.core.llm.offline.events import extract_events

SENT = "2024-03-05T10:00:00+00:00"


def messages_of(item: Mapping[str, Any]) -> list[dict[str, str]]:
    turns = item["turns"]
    named = [t["speaker"] for t in turns if t["speaker"] not in ("user", "assistant")]
    first = named[0] if named else None
    messages = []
    for index, turn in enumerate(turns):
        speaker, text = turn["speaker"], turn["text"]
        role = "user" if speaker in ("user", first) else "assistant"
        content = text if speaker in ("user", "assistant") else f"{speaker}: {text}"
        messages.append({"id": f"t{index}", "role": role, "content": content, "created_at": SENT})
    return messages


def measure(items: list[Mapping[str, Any]]) -> tuple[dict[str, list[int]], list[str]]:
    """Per language: [items, items cited, person turns, turns cited, participants, people]."""
    counts: dict[str, list[int]] = defaultdict(lambda: [0] * 6)
    misses: list[str] = []
    for item in items:
        expect = item["expect"]
        if not (expect.get("edges") or expect.get("facts")):
            continue
        messages = messages_of(item)
        payload = {"target": {"messages": messages}, "timeline": []}
        cards = extract_events(payload, UTC).events
        cited = {source for card in cards for source in card.source_message_ids}
        people = {n["name"] for n in expect["nodes"] if n["type"] == "person"}
        people |= {a["alias"] for a in expect.get("aliases", [])}
        people |= {t["speaker"] for t in item["turns"]}
        participants = {p for card in cards for p in (card.temporal or {})["participants"]}
        persons_turns = [m for m in messages if m["role"] == "user" or ":" in m["content"][:40]]
        row = counts[item["lang"]]
        row[0] += 1
        row[1] += bool(cited)
        row[2] += len(persons_turns)
        row[3] += sum(m["id"] in cited for m in persons_turns)
        row[4] += len(participants)
        row[5] += len(participants & people)
        if not cited:
            misses.append(f"{item['id']}: " + " / ".join(t["text"] for t in item["turns"]))
    return counts, misses


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True, help="a labelled graph set (JSON list)")
    parser.add_argument("--misses", action="store_true", help="list the items with no card")
    args = parser.parse_args()
    with open(args.data, encoding="utf-8") as handle:
        counts, misses = measure(json.load(handle))
    print("lang | items with a card | person turns cited | participants that are people")
    for lang, (n, hit, turns, turn_hit, parts, people) in sorted(counts.items()):
        print(f"{lang} | {hit}/{n} = {hit / n:.3f} | {turn_hit}/{turns} = {turn_hit / turns:.3f}"
              f" | {people}/{parts} = {people / max(parts, 1):.3f}")  # fmt: skip
    if args.misses:
        print("\n".join(misses))


if __name__ == "__main__":
    main()
