"""DDL run statement by statement inside a migration's transaction."""

import sqlite3


def run_script(raw: sqlite3.Connection, script: str) -> None:
    """Execute DDL statement by statement (``executescript`` would commit mid-migration)."""
    for statement in script.split(";"):
        if statement.strip():
            raw.execute(statement)
