"""SQLite's SQL, as the row modules write it, said in PostgreSQL: one statement at a time.

Why a small rewriter and not a transpiler: the row modules use a known, short list of
SQLite idioms, and each must keep its *meaning*, not only its spelling (``json_each(?)``
over a JSON array of ids must compare as the ids' type; ``LIKE`` folds ASCII case), which
a general transpiler cannot know. Every rule here is one idiom, checked by the contract
suite running on both backends; a statement using an idiom not listed here fails loudly on
PostgreSQL instead of being guessed at. What differs in meaning, not spelling (full text,
``fts5vocab``, ``PRAGMA``, job claims), is not translated: it has its own PostgreSQL module.

The rules, outside string literals (which pass through untouched, ``%`` doubled):

- ``?`` is ``%s``; ``X IN (SELECT value FROM json_each(?))`` is ``X = ANY(%s)`` with that
  parameter decoded from JSON into a list, so it binds as an array of the ids' own type;
- ``INSERT OR IGNORE`` is ``INSERT … ON CONFLICT DO NOTHING``; ``INSERT OR REPLACE`` is an
  upsert on the table's key (``Schema.conflict_key``); ``UPDATE OR IGNORE`` is ``UPDATE``;
- ``IFNULL`` is ``COALESCE``; ``instr`` is ``strpos`` (the same 1-based position, 0 if
  none); two-argument ``MAX``/``MIN`` are ``GREATEST``/``LEAST``;
- ``json_extract(X, '$.name')`` is ``(X::jsonb ->> 'name')``; ``LIKE`` is ``ILIKE``;
- an ``INSERT`` into a table with an identity column returns it (``lastrowid``);
- an empty list, ``X IN ()`` (``NOT IN ()``), is ``X = ANY('{}')`` (``<> ALL('{}')``):
  false (true) as on SQLite, where PostgreSQL refuses the empty parentheses.
"""

import re
from dataclasses import dataclass, field

_LITERAL = re.compile(r"'(?:[^']|'')*'")
_MASK = re.compile("\x03(\\d+)\x03")
_JSON_IN = re.compile(
    r"\bIN\s*\(\s*SELECT\s+value\s+FROM\s+json_each\(\s*\?\s*\)\s*\)", re.IGNORECASE
)
_EMPTY_IN = re.compile(r"\b(NOT\s+)?IN\s*\(\s*\)", re.IGNORECASE)
_INSERT_OR = re.compile(r"^\s*INSERT\s+OR\s+(IGNORE|REPLACE)\s+INTO\s+", re.IGNORECASE)
_UPDATE_OR = re.compile(r"^\s*UPDATE\s+OR\s+IGNORE\s+", re.IGNORECASE)
_INSERT_INTO = re.compile(r"^\s*INSERT\s+INTO\s+(\w+)\s*\(([^)]*)\)", re.IGNORECASE)
_JSON_PATH = re.compile(r"\bjson_extract\(\s*([\w.]+)\s*,\s*'\$\.(\w+)'\s*\)", re.IGNORECASE)
_EVENT_TYPE = re.compile(
    r"CASE WHEN json_valid\(([\w.]+)\) THEN json_extract\(\1, '\$\.event_type'\) END",
    re.IGNORECASE,
)
_JSON_ROWS = re.compile(r"\bjson_each\(\s*\?\s*\)\s+(?:AS\s+)?(\w+)", re.IGNORECASE)
_JSON_COLUMN_ROWS = re.compile(
    r"\bjson_each\(\s*([A-Za-z_][\w.]*)\s*(?:,\s*'\$\.(\w+)')?\s*\)\s+(?:AS\s+)?(\w+)",
    re.IGNORECASE,
)
_JOIN_WITHOUT_ON = re.compile(
    r"\bJOIN(\s+json_each\([^()]*\)\s+(?:AS\s+)?\w+)(?!\s+ON\b)", re.IGNORECASE
)
_ARRAY_LENGTH = re.compile(
    r"\bjson_array_length\(\s*([\w.]+)\s*(?:,\s*'\$\.(\w+)')?\s*\)", re.IGNORECASE
)
_AT = r"json_extract\(\s*(\w+\.value)\s*,\s*'\$\[(\d+)\]'\s*\)"
_INDEX_BETWEEN = re.compile(rf"\bBETWEEN\s+{_AT}\s+AND\s+{_AT}", re.IGNORECASE)
_AT_INDEX = re.compile(rf"\b{_AT}", re.IGNORECASE)
_JSON_SET = re.compile(r"\bjson_set\(\s*(.+?)\s*,\s*('\$\.\w+'|\?)\s*,\s*\?\s*\)", re.IGNORECASE)
_NULL_TEST = re.compile(r"\?(?=\s+IS\s+(?:NOT\s+)?NULL\b)", re.IGNORECASE)
_JSON_BOUND_PATH = re.compile(r"\bjson_extract\(\s*([\w.]+)\s*,\s*\?\s*\)", re.IGNORECASE)
_IS_PARAM = re.compile(r"\bIS\s+(NOT\s+)?\?")
_LIMIT_PARAM = re.compile(r"\bLIMIT\s+\?", re.IGNORECASE)
_INDEXED_BY = re.compile(r"\s+INDEXED\s+BY\s+\w+", re.IGNORECASE)
_NOT_INDEXED = re.compile(r"\s+NOT\s+INDEXED\b", re.IGNORECASE)
_UNARY_PLUS = re.compile(r"(?<=[\s(=,])\+(?=[A-Za-z_][\w]*(?:\.\w+)?)")
_CROSS_ON = re.compile(r"\bCROSS\s+JOIN(\s+\w+(?:\s+(?:AS\s+)?\w+)?\s+ON\b)", re.IGNORECASE)
_FROM_SUBQUERY = re.compile(r"\bFROM\s*\(\s*SELECT\b", re.IGNORECASE)
_ALIAS_FOLLOWS = re.compile(
    r"\s*(?:AS\s+)?(?!(?:"
    + "WHERE|ON|JOIN|CROSS|LEFT|INNER|ORDER|GROUP|LIMIT|UNION"
    + r")\b)[A-Za-z_]\w*",
    re.IGNORECASE,
)
_UPSERT = re.compile(
    r"^\s*INSERT\s+INTO\s+(\w+)\s*\(([^)]*)\).*?\bDO\s+UPDATE\s+SET\s+", re.IGNORECASE | re.DOTALL
)
_TWO_ARGS = re.compile(r"\b(MAX|MIN)\(", re.IGNORECASE)
_RETURNING = re.compile(r"\bRETURNING\b", re.IGNORECASE)
_SQLITE_MASTER = re.compile(r"\bsqlite_master\b", re.IGNORECASE)
_TABLES = (
    "(SELECT 'table'::text AS type, CASE c.relname WHEN 'message_search' THEN 'message_fts' "
    "WHEN 'event_search' THEN 'event_fts' ELSE c.relname::text END AS name, "
    "CASE WHEN c.relname IN ('message_search', 'event_search') THEN 'CREATE VIRTUAL TABLE' "
    "ELSE 'CREATE TABLE' END AS sql FROM pg_class c JOIN pg_namespace n ON n.oid = "
    "c.relnamespace WHERE n.nspname = current_schema() AND c.relkind = 'r') AS sqlite_master"
)
_FTS_KEYS = {
    "message_fts": ("message_search", "fts_rowid"),
    "event_fts": ("event_search", "event_pk"),
}
_NOT_ALIAS = "WHERE|ON|JOIN|CROSS|LEFT|INNER|ORDER|GROUP|LIMIT|SET|VALUES|USING|AND|OR|MATCH|UNION"
_FTS_TABLE = re.compile(
    rf"\b(message_fts|event_fts)\b(?:\s+(?:AS\s+)?(?!(?:{_NOT_ALIAS})\b)(\w+))?",
    re.IGNORECASE,
)
_CONTENT = re.compile(r"\b(message|event)_fts_content\s+(?:AS\s+)?(\w+)", re.IGNORECASE)
# Parameter marks while rewriting: a plain one, a JSON array bound as a list, an FTS5
# expression bound as a tsquery, and the last FTS5 expression bound again (its rank).
PLAIN, JSON_ARRAY, FTS_QUERY, FTS_AGAIN = "?", "\x00", "\x01", "\x02"
JSON_PATH, LIMIT = "\x04", "\x05"  # a bound JSON path as a text[]; a LIMIT (-1: none)
_KINDS = {PLAIN: None, JSON_ARRAY: "json", FTS_QUERY: "fts", JSON_PATH: "path", LIMIT: "limit"}


@dataclass(frozen=True, eq=False)
class Schema:
    """What the rewriter must know of the tables: each one's identity column (its
    ``lastrowid``) and the columns of each unique key (an upsert's conflict target); and
    which tables exist (``units.has_table``).
    Hashed by identity: one database's schema keys its statements' translations."""

    identity: dict[str, str] = field(default_factory=dict)
    keys: dict[str, list[tuple[str, ...]]] = field(default_factory=dict)
    tables: frozenset[str] = frozenset()

    def has_table(self, name: str) -> bool:
        """Whether the table SQLite calls ``name`` exists (FTS5's by their search tables)."""
        return _FTS_KEYS.get(name, (name,))[0] in self.tables

    def conflict_key(self, table: str, columns: list[str]) -> tuple[str, ...] | None:
        """The first unique key (primary first) whose columns the insert names."""
        for key in self.keys.get(table, []):
            if set(key) <= set(columns):
                return key
        return None


@dataclass(frozen=True)
class Translated:
    """A statement in PostgreSQL's words; ``params``: for each of its parameters, the
    caller's parameter it binds and how (``None`` as given, ``"json"`` a JSON array
    decoded, ``"fts"`` an FTS5 expression as a tsquery); ``returns_id``: the identity
    column the statement returns for ``lastrowid``."""

    text: str
    params: tuple[tuple[int, str | None], ...] = ()
    returns_id: str | None = None


def translate(sql: str, schema: Schema) -> Translated:
    """``sql`` (SQLite's) as PostgreSQL runs it."""
    literals: list[str] = []
    masked = _LITERAL.sub(lambda m: _masked(literals, m.group(0)), _json_paths(sql))
    masked = _INSERT_OR.sub("INSERT INTO ", masked, count=1)
    masked = _UPDATE_OR.sub("UPDATE ", masked)
    masked = _full_text(_functions(masked.replace("%", "%%")))
    masked = _SQLITE_MASTER.sub(_TABLES.replace("%", "%%"), masked)
    masked = _JSON_IN.sub(f"= ANY({JSON_ARRAY})", masked)
    masked = _EMPTY_IN.sub(lambda m: "<> ALL('{}')" if m.group(1) else "= ANY('{}')", masked)
    masked = _JSON_ROWS.sub(lambda m: _bound_rows(masked, m.group(1)), masked)
    masked = _planner_hints(masked)
    masked = _bound_forms(masked)
    masked = _aliased_subqueries(masked)
    masked, params = _parameters(masked)
    text = _MASK.sub(lambda m: literals[int(m.group(1))].replace("%", "%%"), masked)
    text = _upsert_targets(_conflict_clause(sql, text, schema))
    return_id = _identity_returned(text, schema)
    if return_id:
        text = f"{text.rstrip().rstrip(';')} RETURNING {return_id}"
    return Translated(text, params, return_id)


def _masked(literals: list[str], literal: str) -> str:
    literals.append(literal)
    return f"\x03{len(literals) - 1}\x03"


def _parameters(text: str) -> tuple[str, tuple[tuple[int, str | None], ...]]:
    """Every mark becomes ``%s``; which caller's parameter each binds, and how."""
    plan: list[tuple[int, str | None]] = []
    given = -1
    last_fts = -1
    out = []
    for char in text:
        if char not in _KINDS and char != FTS_AGAIN:
            out.append(char)
            continue
        out.append("%s")
        if char == FTS_AGAIN:
            plan.append((last_fts, "fts"))
            continue
        given += 1
        kind = _KINDS[char]
        last_fts = given if kind == "fts" else last_fts
        plan.append((given, kind))
    return "".join(out), tuple(plan)


def _full_text(text: str) -> str:
    """FTS5's tables are the schema's search tables (``rowid`` their key, ``MATCH`` a
    tsquery over the ``simple`` tsvector, ``rank`` ``ts_rank`` best first, ties by key as
    FTS5's sorter leaves them: the same rows in the same order every time), and an FTS5
    table's ``_content`` (aliased; ``id``, ``c0``) is its search table (key, ``tokens``)."""
    content = _CONTENT.search(text)
    if content:
        alias = content.group(2)
        name, key = _FTS_KEYS[f"{content.group(1).lower()}_fts"]
        text = _CONTENT.sub(f"{name} {alias}", text)
        text = re.sub(rf"\b{alias}\.c0\b", f"{alias}.tokens", text)
        text = re.sub(rf"\b{alias}\.id\b", f"{alias}.{key}", text)
    found = list(_FTS_TABLE.finditer(text))
    for match in found:
        table, alias = match.group(1).lower(), match.group(2)
        name, key = _FTS_KEYS[table]
        ref = alias or name
        text = re.sub(
            rf"\b{table}\s+MATCH\s+\?",
            f"{ref}.terms @@ to_tsquery('simple', {FTS_QUERY})",
            text,
            flags=re.IGNORECASE,
        )
        if alias:
            text = re.sub(rf"\b{alias}\.rowid\b", f"{alias}.{key}", text)
            rank = f"ts_rank({alias}.terms, to_tsquery('simple', {FTS_AGAIN})) DESC, {alias}.{key}"
            text = re.sub(rf"\b{alias}\.rank\b", rank, text)
        if len({m.group(1).lower() for m in found}) == 1:
            text = re.sub(r"(?<![.\w])rowid\b", key, text)
    return _FTS_TABLE.sub(
        lambda m: _FTS_KEYS[m.group(1).lower()][0] + (f" {m.group(2)}" if m.group(2) else ""), text
    )


def _bound_rows(text: str, alias: str) -> str:
    """``json_each(?)`` in FROM: the bound array's elements in its order (``key``); as an
    array of their own type, or as JSON when the statement reads into them."""
    if re.search(rf"\b{alias}\.value\s*->>", text):
        return f"json_array_elements(CAST({PLAIN} AS json)) WITH ORDINALITY AS {alias}(value, key)"
    return f"unnest({JSON_ARRAY}) WITH ORDINALITY AS {alias}(value, key)"


def _bound_forms(text: str) -> str:
    """Parameters whose SQLite meaning needs a value of another shape: a JSON path bound
    for ``json_extract`` (read typed, as jsonb), ``IS ?`` (a NULL-safe comparison), and a
    ``LIMIT`` of -1 (none)."""
    text = _NULL_TEST.sub(f"CAST({PLAIN} AS text)", text)
    text = _JSON_BOUND_PATH.sub(lambda m: f"(({m.group(1)})::jsonb #> {JSON_PATH})", text)
    text = _IS_PARAM.sub(
        lambda m: ("IS DISTINCT FROM " if m.group(1) else "IS NOT DISTINCT FROM ") + PLAIN, text
    )
    return _LIMIT_PARAM.sub(f"LIMIT {LIMIT}", text)


def _planner_hints(text: str) -> str:
    """SQLite's planner hints (``INDEXED BY``, a unary ``+`` that hides a column from an
    index, ``CROSS JOIN … ON`` that fixes the join order) are plain SQL without them."""
    text = _NOT_INDEXED.sub("", _INDEXED_BY.sub("", text))
    return _CROSS_ON.sub(lambda m: "JOIN" + m.group(1), _UNARY_PLUS.sub("", text))


def _aliased_subqueries(text: str) -> str:
    """A subquery in FROM needs a name on PostgreSQL (before 16)."""
    out = []
    last = 0
    for match in _FROM_SUBQUERY.finditer(text):
        opening = text.index("(", match.start())
        close = _closing(text, opening + 1)
        if close is None or _ALIAS_FOLLOWS.match(text, close + 1):
            continue
        out.append(text[last : close + 1] + " AS sg_subquery")
        last = close + 1
    out.append(text[last:])
    return "".join(out)


def _upsert_targets(text: str) -> str:
    """In ``ON CONFLICT … DO UPDATE SET a = a + excluded.a`` the bare ``a`` on the right is
    the row being updated: PostgreSQL wants it named by its table."""
    upsert = _UPSERT.match(text)
    if upsert is None:
        return text
    table, columns = upsert.group(1), [c.strip() for c in upsert.group(2).split(",")]
    head, tail = text[: upsert.end()], text[upsert.end() :]
    names = "|".join(re.escape(column) for column in columns)
    bare = re.compile(rf"(?<![.\w])({names})\b(?!\s*=(?!=))")
    return head + bare.sub(lambda m: f"{table}.{m.group(1)}", tail)


def _functions(piece: str) -> str:
    piece = re.sub(r"\bIFNULL\(", "COALESCE(", piece, flags=re.IGNORECASE)
    piece = re.sub(r"\binstr\(", "strpos(", piece, flags=re.IGNORECASE)
    piece = re.sub(r"\bNOT\s+LIKE\b", "NOT ILIKE", piece, flags=re.IGNORECASE)
    piece = re.sub(r"(?<!NOT )\bLIKE\b", "ILIKE", piece, flags=re.IGNORECASE)
    return _two_argument_extremes(piece)


def _json_paths(text: str) -> str:
    """``json_extract(col, '$.name')`` before literals are masked (the path is one); the
    fallback entries' guarded ``event_type`` is the schema's ``stratagate_event_type``."""
    text = _EVENT_TYPE.sub(lambda m: f"stratagate_event_type({m.group(1)})", text)
    text = _JSON_SET.sub(_json_set, text)
    text = _INDEX_BETWEEN.sub(
        lambda m: (
            f"BETWEEN CAST({m.group(1)} ->> {m.group(2)} AS bigint) AND "
            f"CAST({m.group(3)} ->> {m.group(4)} AS bigint)"
        ),
        text,
    )
    text = _AT_INDEX.sub(lambda m: f"({m.group(1)} ->> {m.group(2)})", text)
    text = _JOIN_WITHOUT_ON.sub(lambda m: "CROSS JOIN" + m.group(1), text)
    text = _ARRAY_LENGTH.sub(lambda m: f"json_array_length({_array(m.group(1), m.group(2))})", text)
    objects = [m.group(3) for m in _JSON_COLUMN_ROWS.finditer(text) if _reads_members(text, m)]
    text = _JSON_COLUMN_ROWS.sub(lambda m: _json_rows(text, m), text)
    for alias in objects:
        text = re.sub(rf"\b{alias}\.type\b", f"json_typeof({alias}.value)", text)
    return _JSON_PATH.sub(lambda m: f"({m.group(1)}::jsonb ->> '{m.group(2)}')", text)


def _json_set(match: re.Match[str]) -> str:
    """``json_set(X, path, ?)`` of a text value: ``jsonb_set`` (the stored text is
    PostgreSQL's spelling of the same JSON)."""
    target, path = match.groups()
    keys = JSON_PATH if path == "?" else "ARRAY['" + path[3:-1] + "']"
    return f"(jsonb_set(({target})::jsonb, {keys}, to_jsonb(CAST(? AS text))))::text"


def _reads_members(text: str, match: re.Match[str]) -> bool:
    return re.search(rf"\b{match.group(3)}\.(key|type|id)\b", text) is not None


def _json_rows(text: str, match: re.Match[str]) -> str:
    """``json_each`` over a column (or a path in it): an array's elements as text, nothing
    for anything else (SQLite's rows of a non-array are only ever filtered out here); an
    object's members when the statement reads their ``key`` or ``type``."""
    column, path, alias = match.groups()
    source = f"({column})::json" + (f" -> '{path}'" if path else "")
    if _reads_members(text, match):
        members = f"CASE WHEN json_typeof({source}) = 'object' THEN {source} ELSE '{{}}' END"
        return f"json_each({members}) WITH ORDINALITY AS {alias}(key, value, id)"
    return f"json_array_elements_text({_array(column, path)}) AS {alias}(value)"


def _array(column: str, path: str | None) -> str:
    """The JSON array at ``path`` of ``column``; an empty one for anything else (SQLite's
    functions give no element, or length 0, there)."""
    source = f"({column})::json" + (f" -> '{path}'" if path else "")
    return f"CASE WHEN json_typeof({source}) = 'array' THEN {source} ELSE '[]' END"


def _two_argument_extremes(piece: str) -> str:
    """``MAX(a, b)`` is ``GREATEST(a, b)``; ``MAX(a)`` (the aggregate) stays."""
    out = []
    last = 0
    for match in _TWO_ARGS.finditer(piece):
        close = _closing(piece, match.end())
        if close is None or not _has_top_level_comma(piece[match.end() : close]):
            continue
        name = "GREATEST" if match.group(1).upper() == "MAX" else "LEAST"
        out.append(piece[last : match.start()] + name + "(")
        last = match.end()
    out.append(piece[last:])
    return "".join(out)


def _closing(text: str, start: int) -> int | None:
    depth = 1
    for position in range(start, len(text)):
        depth += {"(": 1, ")": -1}.get(text[position], 0)
        if depth == 0:
            return position
    return None


def _has_top_level_comma(text: str) -> bool:
    depth = 0
    for char in text:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "," and depth == 0:
            return True
    return False


def _conflict_clause(original: str, text: str, schema: Schema) -> str:
    """``ON CONFLICT`` for SQLite's ``INSERT OR IGNORE`` / ``OR REPLACE`` (before any
    ``RETURNING``)."""
    verb = _INSERT_OR.match(original)
    if verb is None:
        return text
    insert = _INSERT_INTO.match(text)
    if verb.group(1).upper() == "IGNORE" or insert is None:
        clause = " ON CONFLICT DO NOTHING"
    else:
        table = insert.group(1)
        columns = [column.strip() for column in insert.group(2).split(",")]
        key = schema.conflict_key(table, columns)
        if key is None:
            raise ValueError(f"INSERT OR REPLACE INTO {table}: no unique key among {columns}")
        updates = [f"{c} = EXCLUDED.{c}" for c in columns if c not in key]
        action = f"DO UPDATE SET {', '.join(updates)}" if updates else "DO NOTHING"
        clause = f" ON CONFLICT ({', '.join(key)}) {action}"
    returning = _RETURNING.search(text)
    if returning is None:
        return text.rstrip().rstrip(";") + clause
    return text[: returning.start()].rstrip() + clause + " " + text[returning.start() :]


def _identity_returned(text: str, schema: Schema) -> str | None:
    insert = _INSERT_INTO.match(text)
    if insert is None or _RETURNING.search(text):
        return None
    return schema.identity.get(insert.group(1))
