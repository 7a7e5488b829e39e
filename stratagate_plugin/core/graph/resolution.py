"""Entity resolution (spec §4): when a proposed node *is* an existing one, and when it only
looks like one.

Same type and the same normalised key (NFKC, lower-case, whitespace collapsed, then
spaces, underscores and hyphens stripped) as an existing node's name or proven alias →
the same node. Anything merely close — the same key under another type, a key one edit
away, or one key a prefix of the other ("Mel" / "Melanie") — is kept apart and listed as a
possible duplicate: a wrong merge would mix two people's facts, a missed one costs a link.
"""

from collections.abc import Iterable, Mapping

from .shapes import Known, normalise_key

__all__ = ["Known", "first_letters", "keys_of", "near_matches", "normalise_key", "resolve"]

MIN_PREFIX = 3  # a shorter key is a prefix of too many names to mean anything


def resolve(type_: str, keys: Iterable[str], known: Iterable[Known]) -> str | None:
    """The id of the existing node of ``type_`` answering to one of ``keys``, if any."""
    wanted = set(keys)
    for node in known:
        if node.type == type_ and node.keys & wanted:
            return node.node_id
    return None


def near_reason(type_: str, keys: Iterable[str], other: Known) -> str | None:
    """Why ``other`` might be the same entity without being proven so, or None."""
    wanted = set(keys)
    if other.keys & wanted:
        return None if other.type == type_ else f"same name, type {other.type} vs {type_}"
    if other.type != type_:
        return None
    pairs = sorted((mine, theirs) for mine in wanted for theirs in other.keys)
    for mine, theirs in pairs:
        if within_one_edit(mine, theirs):
            return f"names one edit apart ({mine!r} / {theirs!r})"
    for mine, theirs in pairs:
        if _prefix(mine, theirs):
            return f"one name begins the other ({mine!r} / {theirs!r})"
    return None


def near_matches(
    node_id: str, type_: str, keys: Iterable[str], candidates: Iterable[Known]
) -> dict[str, str]:
    """Other node id → reason, for every candidate that nearly matches."""
    key_set = frozenset(keys)
    found: dict[str, str] = {}
    for other in candidates:
        if other.node_id != node_id and (reason := near_reason(type_, key_set, other)):
            found[other.node_id] = reason
    return found


def _prefix(a: str, b: str) -> bool:
    short, long = sorted((a, b), key=len)
    return len(short) >= MIN_PREFIX and short != long and long.startswith(short)


def within_one_edit(a: str, b: str) -> bool:
    """Levenshtein distance exactly 1 (keys of at least 4 characters: short names differ
    by one letter all the time, "Ann" / "Ian")."""
    if a == b or min(len(a), len(b)) < 4 or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        return sum(x != y for x, y in zip(a, b, strict=True)) == 1
    short, long = sorted((a, b), key=len)
    return any(long[:index] + long[index + 1 :] == short for index in range(len(long)))


def keys_of(name: str, aliases: Iterable[str]) -> frozenset[str]:
    return frozenset(k for k in (normalise_key(n) for n in (name, *aliases)) if k)


def first_letters(keys: Mapping[str, object] | Iterable[str]) -> set[str]:
    """The first characters of the keys (the store's candidate ranges for near matches)."""
    return {key[0] for key in keys if key}
