"""Per-field provenance of aliases and tags (spec §4 ``metadataProvenance``): each cites the
events that gave it; a forget or an import undo (``strip_event_provenance``) takes those
events away and deletes an alias or tag left without a source, keeping the node; a
database from before migration 20 gives its aliases and tags their node's sources."""

import sqlite3
from pathlib import Path

from stratagate_plugin.core.memory import StrataGate
from stratagate_plugin.core.store import graph_writes
from stratagate_plugin.core.store.migrations import migrate
from stratagate_plugin.core.store.search_index import register_functions
from tests.graph_world import NS, add_events, card_for, node, open_scripted

PROVENANCE = "SELECT field, value_key, event_id FROM graph_field_sources ORDER BY 1, 2, 3"


async def test_forgetting_the_event_that_gave_an_alias_or_tag_deletes_only_that(
    db_path: Path, plain: sqlite3.Connection
) -> None:
    memory, model = await open_scripted(db_path)
    first = await add_events(memory, card_for("Ana paints", "2024-01-01T00:00:00+00:00"))
    model.push({"nodes": [node("a", "Ana", first, aliases=["Annie"], tags=["painter"])]})
    await memory.derivation.process_pending()
    second, third = (
        [i]
        for i in await add_events(  # one batch
            memory,
            card_for("Ana is Nana", "2024-02-01T00:00:00+00:00"),
            card_for("Ana runs", "2024-03-01T00:00:00+00:00"),
        )
    )
    model.push(
        {
            "nodes": [
                node(
                    "a",
                    "Ana",
                    [*second, *third],
                    aliases=["Nana", "Ghost"],
                    tags=["runner"],
                    alias_sources={"Nana": second, "Ghost": ["evt_elsewhere"]},
                    tag_sources={"runner": third},
                )
            ]
        }
    )
    await memory.derivation.process_pending()
    assert [tuple(row) for row in plain.execute(PROVENANCE)] == [
        ("alias", "annie", first[0]),
        ("alias", "nana", second[0]),
        ("tag", "painter", first[0]),
        ("tag", "runner", third[0]),
    ]  # "Ghost" cited no event of its batch: dropped (with a warning), never stored
    [job] = [j for j in await memory.derivation.list_jobs() if j.detail and "Ghost" in j.detail]
    assert "cites no exposable event" in (job.detail or "")
    detail = await memory.graph.node(ana_id := (await memory.graph.nodes(NS))[0].node.id)
    assert detail.alias_sources == {"Annie": tuple(first), "Nana": tuple(second)}
    assert detail.tag_sources == {"painter": tuple(first), "runner": tuple(third)}
    await memory.curation.act("forget", second[0])
    [ana] = await memory.graph.nodes(NS)
    assert ana.node.aliases == ("Annie",) and ana.node.tags == ("painter", "runner")
    assert await memory.graph.search(NS, "Nana") == []  # its search terms went with it
    await memory.curation.act("forget", third[0])
    [ana] = await memory.graph.nodes(NS)
    assert ana.node.tags == ("painter",) and ana.node.source_event_ids == tuple(first)
    assert (await memory.graph.node(ana_id)).tag_sources == {"painter": tuple(first)}
    await memory.close()


async def test_the_import_undo_path_strips_a_self_introduction_alias(
    db_path: Path, plain: sqlite3.Connection
) -> None:
    memory = await StrataGate.open(db_path)
    for i, line in enumerate(["My name is Mara and I'm a nurse.", "I live in Porto."]):
        await memory.blocks.append_turn("u", "t", user=line, assistant="Noted.", receipt_id=f"r{i}")
    await memory.blocks.seal_tail("u", "t")
    await memory.derivation.process_pending()
    users = [v for v in await memory.graph.nodes("u") if v.node.name == "User"]
    assert users and "Mara" in users[0].node.aliases
    [intro] = [e.id for e in await memory.events.cards("u") if "Mara" in e.summary]
    await memory.db.write(lambda raw: graph_writes.strip_event_provenance(raw, [intro]))
    left = [v for v in await memory.graph.nodes("u") if v.node.name == "User"]
    assert all("Mara" not in v.node.aliases for v in left)
    keys = {row[0] for row in plain.execute("SELECT value_key FROM graph_field_sources")}
    assert "mara" not in keys
    await memory.close()


def test_migration_20_gives_existing_aliases_and_tags_their_node_sources(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "old.db", isolation_level=None)
    register_functions(conn)
    migrate(conn, target=20)  # the version before migration 21 (graph field sources)
    conn.execute(
        "INSERT INTO graph_nodes(id, namespace, name, type, name_key, tags_json, created_at, "
        "updated_at) VALUES ('n1', 'ns', 'Ana', 'person', 'ana', '[\"painter\"]', 'x', 'x')"
    )
    conn.execute("INSERT INTO graph_aliases VALUES ('n1', 'ns', 'Annie', 'annie')")
    conn.executemany("INSERT INTO graph_sources VALUES ('node', 'n1', ?)", [("evt_1",), ("evt_2",)])
    migrate(conn)
    assert [tuple(row) for row in conn.execute(PROVENANCE)] == [
        ("alias", "annie", "evt_1"),
        ("alias", "annie", "evt_2"),
        ("tag", "painter", "evt_1"),
        ("tag", "painter", "evt_2"),
    ]
    conn.close()
