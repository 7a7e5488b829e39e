"""Frozen migration history: the steps build, at every version, exactly the schema the code
of 50c37f4 (before the steps were frozen) built, and an old file still migrates.

``samples/schema-v22.sql`` is ``sqlite_master`` of a file migrated to version 22 by that
code, and ``samples/schema-digests.json`` the digest of the same dump at each version 1–22
(a step added later leaves both as they are).
"""

import hashlib
import json
import sqlite3
from pathlib import Path

import pytest

from stratagate_plugin.core.store import event_term_index, message_facts, term_index
from stratagate_plugin.core.store.migrations import MIGRATIONS, migrate
from stratagate_plugin.core.store.search_index import ensure_index, register_functions
from stratagate_plugin.core.topics.categories import TYPE_CATEGORY, event_category

SAMPLES = Path(__file__).parent / "samples"
FROZEN_VERSION = 22


def schema_dump(raw: sqlite3.Connection) -> str:
    """Every table, index, trigger and view as SQLite stores it, in name order."""
    rows = raw.execute(
        "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name"
    ).fetchall()
    return "".join(
        f"-- {kind} {name} on {table}\n{sql if sql is not None else '-- (automatic)'};\n"
        for kind, name, table, sql in rows
    )


def migrated_to(version: int) -> sqlite3.Connection:
    raw = sqlite3.connect(":memory:", isolation_level=None)
    register_functions(raw)
    migrate(raw, target=version)
    return raw


def with_index(raw: sqlite3.Connection) -> sqlite3.Connection:
    """The search index a file gets when opened by the code of its time: 50c37f4 built it
    after migrating to its latest version (22), so the v22 snapshot holds its tables; a
    later step makes 22 an intermediate version, where the runner builds no index. The
    impact indexes (issue #29) came later and are live code's derived tables: left out."""
    ensure_index(raw)
    derived = (*term_index.TABLE_NAMES, *message_facts.TABLE_NAMES, *event_term_index.TABLE_NAMES)
    for table in derived:
        raw.execute(f"DROP TABLE {table}")
    return raw


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def test_the_steps_build_the_schema_of_their_time() -> None:
    expected = (SAMPLES / "schema-v22.sql").read_text(encoding="utf-8")
    assert schema_dump(with_index(migrated_to(FROZEN_VERSION))) == expected


def test_every_version_matches_its_recorded_schema() -> None:
    recorded = json.loads((SAMPLES / "schema-digests.json").read_text(encoding="utf-8"))
    found = {str(v): digest(schema_dump(migrated_to(v))) for v in range(1, FROZEN_VERSION)}
    found[str(FROZEN_VERSION)] = digest(schema_dump(with_index(migrated_to(FROZEN_VERSION))))
    assert found == recorded


@pytest.mark.parametrize("start", range(FROZEN_VERSION))
def test_a_file_at_any_version_migrates_to_the_same_schema(start: int) -> None:
    raw = migrated_to(start)
    migrate(raw, target=FROZEN_VERSION)
    assert schema_dump(with_index(raw)) == (SAMPLES / "schema-v22.sql").read_text(encoding="utf-8")


def test_each_step_is_named_for_its_number() -> None:
    """A step appended in the wrong place (or twice, after a rebase) fails here."""
    names = [step.__name__ for step in MIGRATIONS]
    assert [name.lstrip("_")[:5] for name in names] == [
        f"m{n:03d}_" for n in range(1, len(MIGRATIONS) + 1)
    ]


CASES = [
    *(("routine", kind) for kind in TYPE_CATEGORY),
    ("routine", "holiday"),
    ("routine", None),
    ("preference", "meeting"),
    ("safety", None),
]


def test_the_category_rule_frozen_in_step_19_is_the_live_rule() -> None:
    """Step 19's triggers carry ``topics.categories``' rule written out; a change of the rule
    without a step rebuilding ``topic_spare`` fails here."""
    raw = migrated_to(FROZEN_VERSION)
    stamp = "2025-01-01T00:00:00+00:00"
    raw.execute(
        "INSERT INTO namespaces(namespace, block_turn_size, block_decay_lambda, created_at, "
        "updated_at) VALUES ('ns', 3, 0.3, ?, ?)",
        (stamp, stamp),
    )
    for pk, (criticality, kind) in enumerate(CASES, start=1):
        raw.execute(
            "INSERT INTO events(pk, id, namespace, title, summary, formed_turn, scope, "
            "criticality, temporal_json, last_adopted_turn, created_at, updated_at) "
            "VALUES (?, ?, 'ns', 't', 's', 1, 'user', ?, ?, 1, ?, ?)",
            (pk, f"evt_{pk}", criticality, json.dumps({"event_type": kind}), stamp, stamp),
        )
    stored = [row[0] for row in raw.execute("SELECT category FROM topic_spare ORDER BY event_pk")]
    assert stored == [event_category(criticality, kind) for criticality, kind in CASES]
