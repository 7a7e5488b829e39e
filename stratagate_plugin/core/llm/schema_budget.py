"""How many tokens an answer to a JSON schema can need at most: a task's output cap.

A runaway reply (a weak model repeating itself inside a string the grammar leaves open)
costs a local server minutes; capping ``max_tokens`` by what the schema allows stops it
without ever cutting a valid answer short. A bounded string counts one token per
character (the worst case, a CJK character each); what the schema leaves unbounded gets a
generous default (``DEFAULT_STRING_TOKENS`` per string, ``DEFAULT_ITEMS`` per list).
"""

from typing import Any

DEFAULT_STRING_TOKENS = 200
DEFAULT_ITEMS = 16
SCALAR_TOKENS = 8  # a number, a boolean, null, an enum's word
_DEPTH_LIMIT = 12  # a recursive schema: its deeper levels count as one unbounded string


def schema_budget(schema: dict[str, Any]) -> int:
    """Tokens the largest valid answer to ``schema`` can take (``$defs`` resolved)."""
    return _tokens(schema, schema.get("$defs", {}), 0)


def _tokens(node: Any, defs: dict[str, Any], depth: int) -> int:
    if not isinstance(node, dict) or depth > _DEPTH_LIMIT:
        return DEFAULT_STRING_TOKENS
    ref = node.get("$ref")
    if isinstance(ref, str):
        return _tokens(defs.get(ref.rsplit("/", 1)[-1]), defs, depth + 1)
    options = node.get("anyOf") or node.get("oneOf") or node.get("allOf")
    if isinstance(options, list) and options:
        return max(_tokens(option, defs, depth + 1) for option in options)
    if "enum" in node or "const" in node:
        return SCALAR_TOKENS
    kind = node.get("type")
    if kind == "string":
        return 2 + int(node.get("maxLength") or DEFAULT_STRING_TOKENS)
    if kind == "array":
        items = int(node.get("maxItems") or DEFAULT_ITEMS)
        return 2 + items * (1 + _tokens(node.get("items"), defs, depth + 1))
    if kind == "object":
        return _object_tokens(node, defs, depth)
    return SCALAR_TOKENS


def _object_tokens(node: dict[str, Any], defs: dict[str, Any], depth: int) -> int:
    properties = node.get("properties") or {}
    total = 2 + sum(
        _key_tokens(name) + _tokens(value, defs, depth + 1) for name, value in properties.items()
    )
    extra = node.get("additionalProperties")
    if not properties and extra is not False:  # a free mapping: DEFAULT_ITEMS entries
        value = extra if isinstance(extra, dict) else {"type": "string"}
        total += DEFAULT_ITEMS * (SCALAR_TOKENS + _tokens(value, defs, depth + 1))
    return total


def _key_tokens(name: str) -> int:
    return 3 + len(name) // 4
