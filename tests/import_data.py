"""v2 exports for the import wizard's tests: facts already known, then a second export
with one new fact, one exact duplicate of a known one and one that overlaps a known fact
only partly (the offline decider is unsure of it: the person chooses)."""

import json
from typing import Any

KNOWN = [
    {
        "title": "Studio opens at ten on Saturdays",
        "summary": "The pottery studio opens at 10am on Saturdays.",
        "category": "project",
        "tags": ["project", "studio"],
    },
    {
        "title": "Glaze supplier raised prices",
        "summary": "The glaze supplier raised prices by 12% in March.",
        "category": "project",
        "temporal": {"happenedStart": "2025-03-01", "precision": "month"},
    },
]
NEW_FACT = {
    "title": "Prefers green tea",
    "summary": "The user drinks green tea in the morning and never coffee.",
    "category": "preference",
    "tags": ["preference", "tea"],
    "temporal": {"mentionedAt": "2025-04-02T09:00:00+00:00"},
}
UNSURE = {
    "title": "Kiln firing on Saturdays",
    "summary": "The studio fires the kiln on Saturdays after it opens.",
    "category": "project",
}
SECOND = [NEW_FACT, KNOWN[0], UNSURE]


def export_text(candidates: list[dict[str, Any]], source: str = "chatgpt") -> str:
    """A v2 document as the export prompt's answer would be."""
    document = {
        "schemaVersion": "stratagate.external-memory.v2",
        "sourceType": "external_ai_memory_export",
        "sourceSystem": source,
        "candidates": candidates,
    }
    return json.dumps(document, ensure_ascii=False, indent=2)
