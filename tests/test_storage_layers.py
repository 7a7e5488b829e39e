"""The storage contract's rooms (issue 28), each check shown to catch a break:

- a capability's package (every ``core/<capability>/``) imports neither ``sqlite3`` nor any
  ``core/store`` module: its service reaches storage only through its contract
  (``self.store``); the doctor alone examines the file itself (``store.health``), since it
  must work on a file the engine cannot open;
- the web app and the plugin import no ``sqlite3``;
- the store imports of the capabilities only their records and contracts, never a rule,
  except the ``STILL_RULES`` listed below: each is a rule the store still applies inside a
  write or read it cannot yet split (named with why in docs/architecture.md), a list that
  may only shrink.
"""

from pathlib import Path

from test_import_layers import PACKAGE, imported_modules, modules, relative

CORE = "stratagate_plugin.core"
NOT_CAPABILITIES = {"store", "llm", "text", "__pycache__"}
MAY_EXAMINE_THE_FILE = {"core/doctor/service.py"}
RECORDS = {  # what the store may import of a capability: records, contracts, constants
    "blocks.storage", "curation.storage", "derivation.storage", "events.storage",
    "gate.storage", "graph.storage", "importer.storage", "overview.storage",
    "profile.storage", "purge.storage", "remember.storage", "retrieval.storage",
    "spaces.storage", "timeline.storage", "topics.storage",
    "events.cards", "graph.shapes", "importer.jobs", "importer.external_format",
    "profile.spaces", "retrieval.hits", "timeline.filters", "topics.model", "topics.budget",
    "gate.trail", "curation.records", "gate.records",
}  # fmt: skip
STILL_RULES = {  # store module → capability rule module it still calls (to remove)
    ("core/store/event_rows.py", "events.weights"),
    ("core/store/graph_reads.py", "graph.views"),
    ("core/store/search_index.py", "events.ranking"),
    ("core/store/search_index.py", "retrieval.bm25"),
    ("core/store/sqlite/derivation.py", "events.ranking"),
    ("core/store/sqlite/derivation.py", "events.search"),
    ("core/store/sqlite/graph.py", "graph.views"),
    ("core/store/sqlite/retrieval.py", "graph.views"),
    ("core/store/topic_sync.py", "topics.sync"),
}


def capabilities(root: Path) -> list[str]:
    found = (root / "core").iterdir()
    return sorted(p.name for p in found if p.is_dir() and p.name not in NOT_CAPABILITIES)


def capabilities_reaching_storage(root: Path) -> list[str]:
    found = []
    for capability in capabilities(root):
        for path in modules(root, f"core/{capability}"):
            names = imported_modules(root, path)
            reaching = "sqlite3" in names or any(n.startswith(f"{CORE}.store") for n in names)
            if reaching and relative(root, path) not in MAY_EXAMINE_THE_FILE:
                found.append(relative(root, path))
    return found


def outer_rooms_importing_sqlite(root: Path) -> list[str]:
    rooms = ("web", "memory_plugin")
    paths = [path for room in rooms for path in modules(root, room)]
    return [relative(root, p) for p in paths if "sqlite3" in imported_modules(root, p)]


def rules_in_the_store(root: Path) -> list[tuple[str, str]]:
    known = set(capabilities(root))
    found = set()
    for path in modules(root, "core/store"):
        for name in imported_modules(root, path):
            parts = name.split(".")
            if len(parts) < 4 or parts[:2] != CORE.split(".") or parts[2] not in known:
                continue
            module = ".".join(parts[2:4])
            if module not in RECORDS:
                found.add((relative(root, path), module))
    return sorted(found)


def test_capabilities_reach_storage_only_through_their_contract() -> None:
    assert capabilities_reaching_storage(PACKAGE) == []


def test_the_web_app_and_the_plugin_import_no_sqlite() -> None:
    assert outer_rooms_importing_sqlite(PACKAGE) == []


def test_the_store_applies_no_new_rule_and_the_old_ones_are_still_listed() -> None:
    found = set(rules_in_the_store(PACKAGE))
    assert sorted(found - STILL_RULES) == [], "a store module imports a capability rule"
    assert sorted(STILL_RULES - found) == [], "gone from the store: remove it from STILL_RULES"


def test_the_checks_catch_a_break(tmp_path: Path) -> None:
    root = tmp_path / "stratagate_plugin"
    files = {
        "core/purge/service.py": "import sqlite3\n",
        "core/doctor/service.py": "from ..store import health\n",
        "core/store/purge_rows.py": "from ..purge.words import Needles\n"
        "from ..purge.storage import TOMBSTONE\n",
        "web/page.py": "import sqlite3\n",
        "memory_plugin/tools.py": "import json\n",
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    assert capabilities_reaching_storage(root) == ["core/purge/service.py"]
    assert outer_rooms_importing_sqlite(root) == ["web/page.py"]
    assert rules_in_the_store(root) == [("core/store/purge_rows.py", "purge.words")]
