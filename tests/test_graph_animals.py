"""Pets are ``animal`` nodes (issue 26): the offline projector types them by their frame
("my dog Biscuit", "Biscuit, our beagle", 我的猫咪咪), a model may answer the type, the CLI,
the web page and the agent's graph search show it, and a database from before the type had
its pets (persons tagged ``owned``) retyped by the migration, losing nothing."""

import asyncio
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from stratagate_plugin.cli.main import main
from stratagate_plugin.core.llm.offline.graph import project_graph
from stratagate_plugin.core.memory import StrataGate
from stratagate_plugin.core.store.migrations import migrate
from stratagate_plugin.core.store.search_index import register_functions
from tests.graph_world import NS, add_events, card_for, fact, node, open_scripted
from tests.test_web_graph import listed, told
from tests.webapp import web_app

BASE_SCHEMA = 22  # the schema version of BASE (50c37f4), before the animal type


def typed(*said: tuple[str, str | None]) -> dict[str, str]:
    """Every node the offline projector proposes for these statements: name → type."""
    events = [
        {
            "id": f"e{i}",
            "quotes": [text],
            "summary": f"{who} said: {text}" if who else f"The user said: {text}",
            "tags": [],
            "participants": [who] if who else [],
            "event_type": "other",
        }
        for i, (text, who) in enumerate(said)
    ]
    return {n.name: n.type for n in project_graph({"events": events, "nodes": []}).nodes}


@pytest.mark.parametrize(
    ("text", "speaker", "pet"),
    [
        ("My dog Biscuit is a beagle.", None, "Biscuit"),
        ("Biscuit, our beagle, loves the park.", None, "Biscuit"),
        ("我的猫咪咪很可爱。", "王芳", "咪咪"),
        ("This is Luna, my cat.", None, "Luna"),
        ("We adopted a puppy named Rex last spring.", "Carol", "Rex"),
        ("I walked my terrier Max before work.", "Jon", "Max"),
        ("我家的狗旺财今天生病了。", "李雷", "旺财"),
        ("我养了一只兔子叫雪球。", "王芳", "雪球"),
    ],
)
def test_a_pet_is_an_animal_owned_by_its_speaker(text: str, speaker: str | None, pet: str) -> None:
    types = typed((text, speaker))
    assert types[pet] == "animal"
    assert types[speaker or "User"] == "person"


@pytest.mark.parametrize(
    "text",
    ["我的猫咪很可爱。", "我的狗狗很乖。", "我的猫今天很乖。", "Thanks Tom, my dog loves it."],
)
def test_a_pet_without_a_name_gives_no_node(text: str) -> None:
    assert set(typed((text, "王芳"))) == {"王芳"}


def test_an_owned_name_the_batch_knows_as_a_pet_is_the_same_animal_and_people_stay_people() -> None:
    types = typed(
        ("My dog Biscuit is a beagle.", None),
        ("Sam owns Biscuit.", "Sam"),
        ("My sister Ana lives in Porto.", None),
    )
    assert types == {"User": "person", "Biscuit": "animal", "Sam": "person", "Ana": "person",
                     "Porto": "place"}  # fmt: skip


def base_database(path: Path) -> None:
    """A file at BASE's schema as its offline projector left it: Sam owns Biscuit, a dog
    (a person tagged ``owned`` with Sam's ``pet:dog`` fact naming it), and Sam's car
    Comet, owned but no pet; Biscuit has an alias and both have sources."""
    conn = sqlite3.connect(path, isolation_level=None)
    register_functions(conn)
    migrate(conn, target=BASE_SCHEMA)
    conn.execute("PRAGMA foreign_keys = ON")
    at = "2024-01-01T00:00:00+00:00"
    nodes = [
        ("n-sam", "Sam", "person", "sam", "[]"),
        ("n-bis", "Biscuit", "person", "biscuit", '["owned"]'),
        ("n-car", "Comet", "person", "comet", '["owned"]'),
    ]
    conn.executemany(
        "INSERT INTO graph_nodes(id, namespace, name, type, name_key, tags_json, created_at, "
        "updated_at) VALUES (?, 'ns', ?, ?, ?, ?, ?, ?)",
        [(*row, at, at) for row in nodes],
    )
    conn.execute("INSERT INTO graph_aliases VALUES ('n-bis', 'ns', 'Biscuity', 'biscuity')")
    conn.execute(
        "INSERT INTO graph_facts(id, node_id, key, value_json, learned_at) "
        "VALUES ('f-pet', 'n-sam', 'pet:dog', '\"Biscuit\"', ?)",
        (at,),
    )
    conn.executemany(
        "INSERT INTO graph_edges(id, namespace, from_node_id, to_node_id, relation, learned_at) "
        "VALUES (?, 'ns', 'n-sam', ?, 'owns', ?)",
        [("g-bis", "n-bis", at), ("g-car", "n-car", at)],
    )
    records = [("node", n[0]) for n in nodes] + [("fact", "f-pet"), ("edge", "g-bis")]
    conn.executemany("INSERT INTO graph_sources VALUES (?, ?, 'evt_1')", records)
    conn.executemany(
        "INSERT INTO graph_terms VALUES ('ns', ?, ?)",
        [("biscuit", "n-bis"), ("person", "n-bis"), ("comet", "n-car")],
    )
    conn.close()


@pytest.mark.sqlite_only(reason="a SQLite file made by hand at an old schema, migrated")
async def test_a_base_database_has_its_pets_retyped_animal_and_keeps_every_record(
    tmp_path: Path,
) -> None:
    path = tmp_path / "old.db"
    base_database(path)
    memory = await StrataGate.open(path)  # foreign keys on: the rebuild must not cascade
    views = {v.node.name: v for v in await memory.graph.nodes("ns")}
    assert {name: v.node.type for name, v in views.items()} == {
        "Sam": "person",
        "Biscuit": "animal",
        "Comet": "person",  # owned, but no pet fact names it
    }
    assert views["Biscuit"].node.aliases == ("Biscuity",)
    assert [v.node.name for v in await memory.graph.nodes("ns", "animal")] == ["Biscuit"]
    await memory.close()
    plain = sqlite3.connect(path)
    assert plain.execute("PRAGMA foreign_key_check").fetchall() == []
    assert plain.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    counts = [
        plain.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]
        for t in ("graph_nodes", "graph_aliases", "graph_facts", "graph_edges", "graph_sources")
    ]
    assert counts == [3, 1, 1, 2, 5]
    edges = "SELECT from_node_id, relation, to_node_id FROM graph_edges ORDER BY id"
    assert plain.execute(edges).fetchall() == [
        ("n-sam", "owns", "n-bis"),
        ("n-sam", "owns", "n-car"),
    ]
    facts = "SELECT node_id, key, value_json FROM graph_facts"
    assert plain.execute(facts).fetchall() == [("n-sam", "pet:dog", '"Biscuit"')]
    with pytest.raises(sqlite3.IntegrityError):  # the CHECK still guards the types
        plain.execute("UPDATE graph_nodes SET type = 'plant' WHERE id = 'n-sam'")
    plain.close()


async def seed_model_animal(db: Path) -> None:
    """A model's projection naming a dog (the model path's schema takes the type)."""
    memory, model = await open_scripted(db)
    [said] = await add_events(memory, card_for("Ana's dog Biscuit", "2024-01-01T00:00:00+00:00"))
    model.push(
        {
            "nodes": [
                node("a", "Ana", [said], facts=[fact("pet:dog", "Biscuit", [said])]),
                node("b", "Biscuit", [said], "animal"),
            ],
            "edges": [
                {"from_ref": "a", "to_ref": "b", "relation": "owns", "source_event_ids": [said]}
            ],
        }
    )
    assert await memory.derivation.project_pending_graph() == 1
    assert await memory.derivation.list_jobs(status="failed") == []
    await memory.close()


async def test_graph_search_finds_an_animal_by_its_type(tmp_path: Path) -> None:
    await seed_model_animal(tmp_path / "m.db")
    memory = await StrataGate.open(tmp_path / "m.db")
    [hit] = await memory.graph.search(NS, "animal")
    assert (hit.view.node.name, hit.compact()["type"]) == ("Biscuit", "animal")
    await memory.close()


def test_the_cli_lists_and_filters_animals(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "m.db"
    asyncio.run(seed_model_animal(db))
    where = ("--db", str(db), "--space", NS)
    assert main(["graph", "--type", "animal", *where]) == 0
    out = capsys.readouterr().out
    assert "Biscuit [animal]" in out and "Ana [person]" not in out
    assert main(["graph", "Biscuit", "--json", *where]) == 0
    cards: list[dict[str, Any]] = json.loads(capsys.readouterr().out)
    assert cards[0]["name"] == "Biscuit" and cards[0]["type"] == "animal"


async def test_the_web_page_filters_and_names_animals_in_both_languages(tmp_path: Path) -> None:
    async with web_app(tmp_path) as (_, host, client):
        memory, space = await told(host, client)
        await memory.db.write(
            lambda raw: raw.execute(
                "UPDATE graph_nodes SET type = 'animal' WHERE namespace = ? AND name = 'Paris'",
                (space,),
            )
        )
        page = await client.get("/memory/graph", params={"space": space, "type": "animal"})
        assert page.status_code == 200
        assert set(listed(page.text)) == {"Paris"}
        assert '<option value="animal" selected>Animal</option>' in page.text
        assert '<span class="badge">Animal</span>' in page.text
        zh = await client.get("/memory/graph", params={"space": space, "lang": "zh"})
        assert '<option value="animal">动物</option>' in zh.text and "宠物" in zh.text
