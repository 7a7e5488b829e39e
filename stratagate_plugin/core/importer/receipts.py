"""Receipt ids for imported turns: a turn is known by what it says, not where the file put it.

``{kind}:{thread}:{fingerprint}:{occurrence}``: the fingerprint digests the turn's roles,
contents and tool calls; the occurrence counts the identical turns before it in the same
thread of the same file, so "ok" said twice is two turns. Receipts are already scoped
by namespace in the store, so the namespace is not repeated here.

Why not the file's hash and the turn's index (the old key): fixing one message changed
every receipt and the whole file was recorded again. Why not the turn's position in its
thread, or a chain over the previous turn's key: a turn added or removed earlier in the
file would shift every key after it, and every later turn would be recorded twice. With
this key a fixed message is a new turn (recorded, as it should be) and every unchanged
turn is recognised wherever it now stands.

``at`` is left out on purpose: the same words with a corrected time are the same turn,
and recording them again would double every later block, event and search hit. The
store keeps the first time and reports the difference as a receipt conflict, which the
importer turns into a warning.
"""

import hashlib
import json
from collections import Counter
from collections.abc import Iterable, Sequence

from ..records import MessageIn


def content_fingerprint(messages: Sequence[MessageIn]) -> str:
    """A digest of the turn's roles, contents and tool calls (not its time)."""
    parts = [[m.role, m.content, [trace.model_dump() for trace in m.tool_calls]] for m in messages]
    text = json.dumps(parts, sort_keys=True, separators=(",", ":"))  # ASCII: surrogate-safe
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def receipt_ids(kind: str, turns: Iterable[tuple[str, str, Sequence[MessageIn]]]) -> list[str]:
    """One receipt id per (namespace, thread, messages) turn, in order."""
    seen: Counter[tuple[str, str, str]] = Counter()
    ids = []
    for space, thread, messages in turns:
        fingerprint = content_fingerprint(messages)
        occurrence = seen[space, thread, fingerprint]
        seen[space, thread, fingerprint] += 1
        ids.append(f"{kind}:{thread}:{fingerprint}:{occurrence}")
    return ids
