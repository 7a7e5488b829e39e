"""Migration steps 19 onward: the topic reads' own index, external-memory imports, graph
field provenance, truthful provenance. Frozen: each step's DDL is written out as it was
when the step was made, and nothing of the package is imported but ``script``.

A new step goes at the end of this module (``mNNN_what_it_does``, the next number) and at
the end of ``MIGRATIONS`` in ``__init__.py``; its DDL is written out here, never imported.
"""

import sqlite3

from .script import run_script


def m019_topic_spare(raw: sqlite3.Connection) -> None:
    """The topic reads of every turn made independent of the space's size: the fallback
    entries' index (``topic_spare``: each visible event in no chapter without agent events,
    with its category, and the counts per category) and a ``touched`` flag on chapter
    members whose event changed since it was seen, both filled from the data as it is and
    kept by triggers from then on."""
    for statement in _SPARE_TABLES:
        raw.execute(statement)
    raw.execute(_SPOT.format("1"))
    raw.execute(
        f"INSERT INTO topic_spare_counts({_KEY}, n) SELECT {_KEY}, COUNT(*) FROM topic_spare "
        f"GROUP BY {_KEY}"
    )
    for statement in (*_SPARE_TRIGGERS, *_TOUCH_SCHEMA):
        raw.execute(statement)


# Step 19's SQL as it stood at 50c37f4: the category rule of topics/categories.py written
# out, its CASE reading the event type once (c87e13e; files migrated before that commit hold
# the older CASE, one json_extract per type, which gives the same categories). A change of
# the rule needs a new step that rebuilds topic_spare, never an edit here.
_CATEGORY = (
    "CASE WHEN e.criticality != 'routine' THEN 'preferences' ELSE CASE "
    "json_extract(e.temporal_json, '$.event_type') "
    "WHEN 'decision' THEN 'decisions' WHEN 'plan' THEN 'decisions' "
    "WHEN 'change' THEN 'decisions' WHEN 'cancellation' THEN 'decisions' "
    "WHEN 'release' THEN 'work' WHEN 'task_completed' THEN 'work' "
    "WHEN 'migration' THEN 'work' WHEN 'incident' THEN 'work' "
    "WHEN 'meeting' THEN 'relationships' WHEN 'collaboration' THEN 'relationships' "
    "ELSE 'other' END END"
)
_HELD = (
    "SELECT 1 FROM topic_members m JOIN topics t ON t.id = m.topic_id "
    "WHERE m.event_id = e.id AND t.has_agent {0} 0"
)
_SPOT = (
    "INSERT INTO topic_spare(event_pk, namespace, category, pool, agent_chapter) "
    f"SELECT e.pk, e.namespace, {_CATEGORY}, e.pool, EXISTS ({_HELD.format('!=')}) "
    "FROM events e WHERE {0} AND e.status IN ('active', 'superseded') "
    f"AND NOT EXISTS ({_HELD.format('=')})"
)
_UNSPOT = "DELETE FROM topic_spare WHERE event_pk IN (SELECT e.pk FROM events e WHERE {0})"
_KEY = "namespace, category, pool, agent_chapter"
_SPARE_TABLES = (
    "CREATE TABLE topic_spare (event_pk INTEGER PRIMARY KEY, namespace TEXT NOT NULL, "
    "category TEXT NOT NULL, pool TEXT NOT NULL, agent_chapter INTEGER NOT NULL)",
    "CREATE INDEX topic_spare_order ON topic_spare(namespace, event_pk)",
    "CREATE INDEX topic_spare_category ON topic_spare(namespace, category, event_pk)",
    "CREATE TABLE topic_spare_counts (namespace TEXT NOT NULL, category TEXT NOT NULL, "
    "pool TEXT NOT NULL, agent_chapter INTEGER NOT NULL, n INTEGER NOT NULL, "
    "PRIMARY KEY (namespace, category, pool, agent_chapter)) WITHOUT ROWID",
)


def _respot(where: str) -> str:
    """Trigger body: the events ``where`` selects leave the index and enter it again if
    they are fallback candidates now."""
    return f"{_UNSPOT.format(where)}; {_SPOT.format(where)};"


_MEMBERS = "e.id IN (SELECT event_id FROM topic_members WHERE topic_id = {0}.id)"
_CHANGED = (
    "OLD.status IS NOT NEW.status OR OLD.pool IS NOT NEW.pool OR OLD.namespace IS NOT "
    "NEW.namespace OR OLD.criticality IS NOT NEW.criticality OR "
    "json_extract(OLD.temporal_json, '$.event_type') IS NOT "
    "json_extract(NEW.temporal_json, '$.event_type')"
)
_SPARE_TRIGGERS = (
    "CREATE TRIGGER topic_spare_counted AFTER INSERT ON topic_spare BEGIN "
    f"INSERT INTO topic_spare_counts({_KEY}, n) VALUES (NEW.namespace, NEW.category, "
    "NEW.pool, NEW.agent_chapter, 1) ON CONFLICT DO UPDATE SET n = n + 1; END",
    "CREATE TRIGGER topic_spare_uncounted AFTER DELETE ON topic_spare BEGIN "
    "UPDATE topic_spare_counts SET n = n - 1 WHERE namespace = OLD.namespace AND "
    "category = OLD.category AND pool = OLD.pool AND agent_chapter = OLD.agent_chapter; END",
    "CREATE TRIGGER topic_spare_event_added AFTER INSERT ON events BEGIN "
    f"{_SPOT.format('e.pk = NEW.pk')}; END",
    "CREATE TRIGGER topic_spare_event_changed AFTER UPDATE ON events "
    f"WHEN {_CHANGED} BEGIN {_respot('e.pk = NEW.pk')} END",
    "CREATE TRIGGER topic_spare_event_deleted AFTER DELETE ON events BEGIN "
    "DELETE FROM topic_spare WHERE event_pk = OLD.pk; END",
    "CREATE TRIGGER topic_spare_placed AFTER INSERT ON topic_members BEGIN "
    f"{_respot('e.id = NEW.event_id')} END",
    "CREATE TRIGGER topic_spare_unplaced AFTER DELETE ON topic_members BEGIN "
    f"{_respot('e.id = OLD.event_id')} END",
    "CREATE TRIGGER topic_spare_moved AFTER UPDATE OF topic_id, event_id ON topic_members "
    f"BEGIN {_respot('e.id IN (OLD.event_id, NEW.event_id)')} END",
    "CREATE TRIGGER topic_spare_chapter_added AFTER INSERT ON topics BEGIN "
    f"{_respot(_MEMBERS.format('NEW'))} END",
    "CREATE TRIGGER topic_spare_chapter_turned AFTER UPDATE OF has_agent ON topics "
    f"WHEN OLD.has_agent IS NOT NEW.has_agent BEGIN {_respot(_MEMBERS.format('NEW'))} END",
    "CREATE TRIGGER topic_spare_chapter_deleted AFTER DELETE ON topics BEGIN "
    f"{_respot(_MEMBERS.format('OLD'))} END",
)
_TOUCH_SCHEMA = (  # chapter members whose event changed since the chapter saw it
    "ALTER TABLE topic_members ADD COLUMN touched INTEGER NOT NULL DEFAULT 0",
    "UPDATE topic_members SET touched = 1 WHERE NOT EXISTS (SELECT 1 FROM events e WHERE "
    "e.id = topic_members.event_id AND e.status IN ('active', 'superseded') AND "
    "e.updated_at = topic_members.seen_at)",
    "CREATE INDEX topic_members_touched ON topic_members(namespace) "
    "WHERE touched = 1 OR fingerprint IS NULL",
    "CREATE TRIGGER topic_members_touch AFTER UPDATE ON events WHEN OLD.updated_at IS NOT "
    "NEW.updated_at OR OLD.status IS NOT NEW.status BEGIN UPDATE topic_members SET "
    "touched = 1 WHERE event_id = NEW.id AND touched = 0; END",
    "CREATE TRIGGER topic_members_gone AFTER DELETE ON events BEGIN UPDATE topic_members "
    "SET touched = 1 WHERE event_id = OLD.id; END",
)


def m020_imports(raw: sqlite3.Connection) -> None:
    """External-memory import jobs (spec §11.4): the pasted text, status and progress, one
    row per candidate with its decision (written once) and the user's choice; a committed
    job names its batch, the permanent source block its events cite."""
    run_script(
        raw,
        """
        CREATE TABLE import_jobs (
            id TEXT PRIMARY KEY,
            namespace TEXT NOT NULL,
            status TEXT NOT NULL CHECK (status IN ('extracting', 'processing',
                'awaiting_confirmation', 'ready', 'committing', 'committed', 'undone', 'failed')),
            format TEXT NOT NULL,
            source_system TEXT NOT NULL,
            text TEXT NOT NULL,
            payload TEXT NOT NULL DEFAULT '{}',
            processed INTEGER NOT NULL DEFAULT 0,
            total INTEGER NOT NULL DEFAULT 0,
            error TEXT,
            batch_id TEXT UNIQUE,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            committed_at TEXT,
            undone_at TEXT
        );
        CREATE INDEX import_jobs_namespace ON import_jobs(namespace, created_at);
        CREATE INDEX import_jobs_status ON import_jobs(status);
        CREATE TABLE import_items (
            job_id TEXT NOT NULL REFERENCES import_jobs(id),
            idx INTEGER NOT NULL,
            candidate_json TEXT NOT NULL,
            decision_json TEXT,
            choice TEXT,
            PRIMARY KEY (job_id, idx)
        ) WITHOUT ROWID
        """,
    )


def m021_graph_field_sources(raw: sqlite3.Connection) -> None:
    """Per-field provenance of node aliases and tags (spec §4 ``metadataProvenance``): the
    events that gave each one, so a forget or an import undo deletes an alias or tag left
    without a source. Existing aliases and tags are given their node's sources."""
    run_script(
        raw,
        """
        CREATE TABLE graph_field_sources (
            node_id TEXT NOT NULL,
            field TEXT NOT NULL CHECK (field IN ('alias', 'tag')),
            value_key TEXT NOT NULL,
            event_id TEXT NOT NULL,
            PRIMARY KEY (node_id, field, value_key, event_id)
        ) WITHOUT ROWID;
        CREATE INDEX graph_field_sources_event ON graph_field_sources(event_id);
        INSERT OR IGNORE INTO graph_field_sources
            SELECT a.node_id, 'alias', a.alias_key, s.event_id FROM graph_aliases a
            JOIN graph_sources s ON s.record_kind = 'node' AND s.record_id = a.node_id;
        INSERT OR IGNORE INTO graph_field_sources
            SELECT n.id, 'tag', j.value, s.event_id FROM graph_nodes n, json_each(n.tags_json) j
            JOIN graph_sources s ON s.record_kind = 'node' AND s.record_id = n.id
        """,
    )


def m022_provenance(raw: sqlite3.Connection) -> None:
    """Truthful sources. A message composed from memory (its turn adopted evidence) is marked
    with the refs it adopted, so it is never a new event's source; an event written during
    a turn (``memory_remember``) waits in ``pending_citations`` for that turn's user message,
    cited in the same transaction that records the turn."""
    run_script(
        raw,
        """
        ALTER TABLE messages ADD COLUMN composed_from_memory INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE messages ADD COLUMN adopted_refs_json TEXT NOT NULL DEFAULT '[]';
        CREATE TABLE pending_citations (
            event_id TEXT PRIMARY KEY,
            namespace TEXT NOT NULL,
            thread_id TEXT NOT NULL,
            created_at TEXT NOT NULL
        ) WITHOUT ROWID;
        CREATE INDEX pending_citations_thread ON pending_citations(namespace, thread_id)
        """,
    )


def m023_thread_titles(raw: sqlite3.Connection) -> None:
    """A conversation's own title, as the product it was imported from named it (ChatGPT's
    ``title``, Claude's ``name``); empty for a thread that has none."""
    run_script(raw, "ALTER TABLE threads ADD COLUMN title TEXT NOT NULL DEFAULT ''")


def m024_animal_nodes(raw: sqlite3.Connection) -> None:
    """An ``animal`` node type for pets, which were typed ``person`` (tagged ``owned``)
    while the CHECK listed five types. SQLite cannot alter a CHECK, so ``graph_nodes`` is
    rebuilt; dropping it with foreign keys on would delete its aliases, facts and edges by
    cascade, so they are held aside and put back. A person node tagged ``owned`` that an
    owner's ``owns`` edge and ``pet:<kind>`` fact name is a pet: it becomes an animal."""
    held = ("graph_aliases", "graph_facts", "graph_edges")
    for table in held:
        raw.execute(f"CREATE TEMP TABLE held_{table} AS SELECT * FROM main.{table}")
    run_script(
        raw,
        """
        CREATE TABLE graph_nodes_new (
            pk INTEGER PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            namespace TEXT NOT NULL,
            name TEXT NOT NULL,
            type TEXT NOT NULL CHECK (type IN
                ('person', 'project', 'organization', 'tool', 'place', 'animal')),
            name_key TEXT NOT NULL,
            tags_json TEXT NOT NULL DEFAULT '[]',
            status TEXT NOT NULL DEFAULT 'active'
                CHECK (status IN ('active', 'superseded', 'disputed', 'archived')),
            confidence REAL NOT NULL DEFAULT 0.8,
            source_count INTEGER NOT NULL DEFAULT 0,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL
        );
        INSERT INTO graph_nodes_new SELECT * FROM graph_nodes;
        DROP TABLE graph_nodes;
        ALTER TABLE graph_nodes_new RENAME TO graph_nodes;
        CREATE INDEX graph_nodes_key ON graph_nodes(namespace, name_key, type);
        CREATE INDEX graph_nodes_importance ON graph_nodes(namespace, source_count DESC, pk)
        """,
    )
    for table in held:  # with foreign keys off (a rebuilt copy) the drop deleted nothing
        raw.execute(f"DELETE FROM main.{table}")
        raw.execute(f"INSERT INTO main.{table} SELECT * FROM temp.held_{table}")
        raw.execute(f"DROP TABLE temp.held_{table}")
    run_script(
        raw,
        """
        CREATE TEMP TABLE pets AS SELECT n.id, n.namespace FROM graph_nodes n
            WHERE n.type = 'person'
            AND EXISTS (SELECT 1 FROM json_each(n.tags_json) t WHERE t.value = 'owned')
            AND EXISTS (SELECT 1 FROM graph_edges e JOIN graph_facts f
                ON f.node_id = e.from_node_id AND f.key LIKE 'pet:%'
                WHERE e.to_node_id = n.id AND e.relation = 'owns'
                AND json_valid(f.value_json)
                AND lower(trim(json_extract(f.value_json, '$'))) = lower(trim(n.name)));
        UPDATE graph_nodes SET type = 'animal' WHERE id IN (SELECT id FROM temp.pets);
        DELETE FROM graph_terms WHERE term = 'person' AND node_id IN (SELECT id FROM temp.pets);
        INSERT OR IGNORE INTO graph_terms(namespace, term, node_id)
            SELECT namespace, 'animal', id FROM temp.pets;
        DROP TABLE temp.pets
        """,
    )


def m025_derived_by(raw: sqlite3.Connection) -> None:
    """Who derived a block's views, an event card and a job's result: the model's name,
    "offline", or "offline-fallback" when the model failed and the offline model's result
    was kept so memory still fills (issue 31); ``derive_error`` holds the model's error as
    one line. NULL: derived before this column, by whatever model ran then."""
    run_script(
        raw,
        """
        ALTER TABLE blocks ADD COLUMN derived_by TEXT;
        ALTER TABLE blocks ADD COLUMN derive_error TEXT;
        ALTER TABLE events ADD COLUMN derived_by TEXT;
        ALTER TABLE events ADD COLUMN derive_error TEXT;
        ALTER TABLE jobs ADD COLUMN derived_by TEXT;
        CREATE INDEX blocks_derived_offline ON blocks(namespace, updated_at)
            WHERE derived_by = 'offline-fallback'
        """,
    )


def m026_unfiled_kept_by_the_topics(raw: sqlite3.Connection) -> None:
    """The topic rules leave SQL (issue 28): step 19's triggers that decided which events are
    fallback entries and wrote their category (``topics.categories``' rule written out) are
    dropped, and ``topic_spare`` is kept by the topics capability's own code from now on.
    What stays in SQL holds no rule: ``topic_spare_counts`` kept equal to the rows it counts
    (the two counting triggers of step 19), and ``topic_spare_marks``, the events whose entry
    a write may have changed (added, deleted, their status, pool, space, criticality or
    temporal fields changed, placed in or out of a chapter, their chapter added, deleted or
    gaining agent events), each marked in the writing transaction whichever code wrote it;
    the topics' rule re-files the marked events and clears their marks. The entries as they
    stand are exact (step 19's triggers kept them until now), so nothing is marked here."""
    for name in _RULE_TRIGGERS:
        raw.execute(f"DROP TRIGGER IF EXISTS {name}")
    raw.execute("CREATE TABLE topic_spare_marks (event_pk INTEGER PRIMARY KEY)")
    for statement in _MARK_TRIGGERS:
        raw.execute(statement)


_RULE_TRIGGERS = (
    "topic_spare_event_added",
    "topic_spare_event_changed",
    "topic_spare_event_deleted",
    "topic_spare_placed",
    "topic_spare_unplaced",
    "topic_spare_moved",
    "topic_spare_chapter_added",
    "topic_spare_chapter_turned",
    "topic_spare_chapter_deleted",
)
_MARK = "INSERT OR IGNORE INTO topic_spare_marks(event_pk) "
_MARK_EVENTS = _MARK + "SELECT pk FROM events WHERE id IN ({0})"
_MARK_MEMBERS = _MARK_EVENTS.format("SELECT event_id FROM topic_members WHERE topic_id = {0}.id")
_MARK_TRIGGERS = (
    f"CREATE TRIGGER topic_marks_event_added AFTER INSERT ON events BEGIN {_MARK} "
    "VALUES (NEW.pk); END",
    "CREATE TRIGGER topic_marks_event_changed AFTER UPDATE ON events WHEN OLD.status IS NOT "
    "NEW.status OR OLD.pool IS NOT NEW.pool OR OLD.namespace IS NOT NEW.namespace OR "
    "OLD.criticality IS NOT NEW.criticality OR OLD.temporal_json IS NOT NEW.temporal_json "
    f"BEGIN {_MARK} VALUES (NEW.pk); END",
    f"CREATE TRIGGER topic_marks_event_deleted AFTER DELETE ON events BEGIN {_MARK} "
    "VALUES (OLD.pk); END",
    "CREATE TRIGGER topic_marks_placed AFTER INSERT ON topic_members BEGIN "
    f"{_MARK_EVENTS.format('NEW.event_id')}; END",
    "CREATE TRIGGER topic_marks_unplaced AFTER DELETE ON topic_members BEGIN "
    f"{_MARK_EVENTS.format('OLD.event_id')}; END",
    "CREATE TRIGGER topic_marks_moved AFTER UPDATE OF topic_id, event_id ON topic_members "
    f"BEGIN {_MARK_EVENTS.format('OLD.event_id, NEW.event_id')}; END",
    "CREATE TRIGGER topic_marks_chapter_added AFTER INSERT ON topics BEGIN "
    f"{_MARK_MEMBERS.format('NEW')}; END",
    "CREATE TRIGGER topic_marks_chapter_turned AFTER UPDATE OF has_agent ON topics WHEN "
    f"OLD.has_agent IS NOT NEW.has_agent BEGIN {_MARK_MEMBERS.format('NEW')}; END",
    "CREATE TRIGGER topic_marks_chapter_deleted AFTER DELETE ON topics BEGIN "
    f"{_MARK_MEMBERS.format('OLD')}; END",
)


_EVENT_TYPE_OF = (
    "CASE WHEN json_valid({0}.temporal_json) THEN json_extract({0}.temporal_json, "
    "'$.event_type') END"
)


def m027_marks_follow_the_event_type(raw: sqlite3.Connection) -> None:
    """An event's fallback entry reads one field of its temporal JSON, ``event_type`` (as
    the store hands it to the rule: NULL when the JSON is not valid); step 26 marked every
    temporal change, and the graph writes ``participant_node_ids`` into it for every event
    it projects, so each projection marked its events and the next catalog read had to
    write (re-file) before it could read. Now only a change of what the entry reads marks."""
    raw.execute("DROP TRIGGER IF EXISTS topic_marks_event_changed")
    raw.execute(
        "CREATE TRIGGER topic_marks_event_changed AFTER UPDATE ON events WHEN OLD.status IS NOT "
        "NEW.status OR OLD.pool IS NOT NEW.pool OR OLD.namespace IS NOT NEW.namespace OR "
        "OLD.criticality IS NOT NEW.criticality OR "
        f"({_EVENT_TYPE_OF.format('OLD')}) IS NOT ({_EVENT_TYPE_OF.format('NEW')}) "
        f"BEGIN {_MARK} VALUES (NEW.pk); END"
    )


def m028_page_indexes(raw: sqlite3.Connection) -> None:
    """Indexes the web pages walk without visiting event rows. ``events_timeline`` gains
    ``pk`` and ``status``: a deep page (``offset=4000``) checked each skipped event's
    status in its row (~18 ms at 20k events); now the index answers the filter and the
    order (chronology, then pk) and only the shown rows are read. ``events_id_status``:
    the graph's listing reads the status of every event its nodes and edges cite (~900
    for a page of 100 nodes), each a row lookup through the unique id index before."""
    raw.execute("DROP INDEX IF EXISTS events_timeline")
    raw.execute(
        "CREATE INDEX events_timeline ON events(namespace, "
        "COALESCE(json_extract(temporal_json, '$.happened_start'), "
        "json_extract(temporal_json, '$.happened_end'), "
        "json_extract(temporal_json, '$.mentioned_at'), created_at), pk, status)"
    )
    raw.execute("CREATE INDEX IF NOT EXISTS events_id_status ON events(id, status)")


_STATE_COLUMNS = "pk, namespace, pool, id, status, superseded_by, updated_at"
_STATE_OF = "{0}.pk, {0}.namespace, {0}.pool, {0}.id, {0}.status, {0}.superseded_by, {0}.updated_at"


def m029_event_states(raw: sqlite3.Connection) -> None:
    """``event_states``: the columns event search reads of each candidate (its space,
    pool, id, status, superseder and ``updated_at``, ~60 bytes) beside the wide
    ``events`` rows (~580 bytes), filled from the data and kept by triggers, so a search
    checks ~270 candidates' visibility and reads their columns from ~1/8 of the pages."""
    raw.execute(
        "CREATE TABLE IF NOT EXISTS event_states (pk INTEGER PRIMARY KEY, "
        "namespace TEXT NOT NULL, pool TEXT NOT NULL, id TEXT NOT NULL, status TEXT NOT NULL, "
        "superseded_by TEXT, updated_at TEXT NOT NULL)"
    )
    raw.execute("DELETE FROM event_states")
    raw.execute(f"INSERT INTO event_states({_STATE_COLUMNS}) SELECT {_STATE_COLUMNS} FROM events")
    add = f"INSERT INTO event_states({_STATE_COLUMNS}) VALUES ({_STATE_OF.format('NEW')})"
    for statement in (
        f"CREATE TRIGGER IF NOT EXISTS event_states_added AFTER INSERT ON events BEGIN {add}; END",
        "CREATE TRIGGER IF NOT EXISTS event_states_changed AFTER UPDATE OF "
        f"{_STATE_COLUMNS} ON events BEGIN DELETE FROM event_states WHERE pk = OLD.pk; {add}; END",
        "CREATE TRIGGER IF NOT EXISTS event_states_deleted AFTER DELETE ON events BEGIN "
        "DELETE FROM event_states WHERE pk = OLD.pk; END",
    ):
        raw.execute(statement)
