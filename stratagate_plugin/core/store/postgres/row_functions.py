"""SQLite's application-defined SQL functions (``create_function``), evaluated in Python for
PostgreSQL, which cannot call into this process.

The purge registers its rule as SQL functions over one column (``sg_holds(content)``,
``sg_scrub(title)``: ``purge_rows.register``) so that the same statements find, count,
scrub and delete the cells holding the words. On PostgreSQL such a statement runs in two
steps, each keeping SQLite's meaning (the function decides, per row, in Python): the
statement's one table is read (each row's ``ctid`` and the called columns, in the unit's
own transaction), each call evaluated on each row, and each call then bound as its result:
a predicate (a function answering ``bool``) as the rows it holds for
(``T.ctid = ANY(…)``), a value as the rows it changes with their new values
(``COALESCE((… WHERE sg.at = T.ctid), column)``). The statement goes on to the dialect as
any other, so its other idioms are translated as usual. The cost is SQLite's: there the
function is called on every row too; here each row's cells also cross the connection once
per statement (a purge, the one user, reads a large table's text a few times).
"""

import re
from collections.abc import Callable, Sequence
from typing import Any

import psycopg

_LITERAL = r"'(?:[^']|'')*'"
_TABLE = re.compile(
    r"^\s*(?:SELECT\b.*?\bFROM|UPDATE(?:\s+OR\s+IGNORE)?|DELETE\s+FROM)\s+(\"?\w+\"?)",
    re.IGNORECASE | re.DOTALL,
)
_HOLDS = "({table}.ctid = ANY(CAST(? AS tid[])))"
_VALUE = (
    "COALESCE((SELECT sg.value FROM unnest(CAST(? AS tid[]), CAST(? AS text[])) "
    "AS sg(at, value) WHERE sg.at = {table}.ctid), {column})"
)
Functions = dict[str, Callable[[Any], Any]]


def calls(sql: str, functions: Functions) -> re.Pattern[str] | None:
    """The pattern of the registered functions' one-column calls, when ``sql`` makes any."""
    if not functions or not any(f"{name}(" in sql for name in functions):
        return None
    names = "|".join(re.escape(name) for name in functions)
    return re.compile(rf"({_LITERAL})|(\?)|\b({names})\(\s*(\"?[A-Za-z_]\w*\"?)\s*\)")


def evaluated(
    conn: psycopg.Connection[Any],
    sql: str,
    params: Sequence[Any],
    functions: Functions,
    pattern: re.Pattern[str],
) -> tuple[str, list[Any]]:
    """``sql`` with each call replaced by its bound result, and the parameters to match."""
    table = _TABLE.match(sql)
    if table is None:
        raise ValueError(f"a Python SQL function outside one table's statement: {sql[:80]}")
    found = pattern.findall(sql)
    columns = list(dict.fromkeys(column for _, _, name, column in found if name))
    rows = _rows(conn, table.group(1), columns)
    out: list[str] = []
    bound: list[Any] = []
    given = iter(params)
    last = 0
    for match in pattern.finditer(sql):
        literal, mark, name, column = match.groups()
        out.append(sql[last : match.start()])
        last = match.end()
        if literal or mark:
            out.append(match.group(0))
            bound.extend([next(given)] if mark else [])
            continue
        index = columns.index(column) + 1
        text, values = _call(functions[name], rows, index, table.group(1), column)
        out.append(text)
        bound.extend(values)
    out.append(sql[last:])
    return "".join(out), [*bound, *given]


def _rows(conn: psycopg.Connection[Any], table: str, columns: list[str]) -> list[Sequence[Any]]:
    names = ", ".join(columns)
    return list(conn.execute(f"SELECT ctid::text, {names} FROM {table}"))


def _call(
    function: Callable[[Any], Any],
    rows: list[Sequence[Any]],
    index: int,
    table: str,
    column: str,
) -> tuple[str, list[Any]]:
    """One call's SQL and parameters: the rows it holds for, or those whose value it changes."""
    results = [(row[0], row[index], function(row[index])) for row in rows]
    if isinstance(function(""), bool):  # a predicate, known whether or not rows exist
        held = [at for at, _, result in results if result]
        return _HOLDS.format(table=table), [_tids(held)]
    changed = [(at, result) for at, value, result in results if result != value]
    text = _VALUE.format(table=table, column=column)
    return text, [_tids([at for at, _ in changed]), [result for _, result in changed]]


def _tids(found: list[str]) -> str:
    """Row addresses as ``tid[]``'s text (``{"(0,1)","(0,2)"}``)."""
    return "{" + ",".join(f'"{at}"' for at in found) + "}"
