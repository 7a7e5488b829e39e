"""Imports, the profile and purge behind their storage contracts (issue 28): their services
import no ``sqlite3`` and no store module, and the store modules they use import of the
capabilities only records and contracts, never a rule (word lists, matching, receipts,
renderings, decisions)."""

from pathlib import Path

from test_import_layers import PACKAGE, imported_modules, modules, relative

CORE = "stratagate_plugin.core"
CAPABILITIES = ("core/importer", "core/profile", "core/purge")
STORE_MODULES = (
    "core/store/import_rows.py",
    "core/store/import_batch_rows.py",
    "core/store/profile_rows.py",
    "core/store/purge_rows.py",
    "core/store/purge_files.py",
    "core/store/space_purge_rows.py",
    "core/store/sqlite/imports.py",
    "core/store/sqlite/profile.py",
    "core/store/sqlite/purge.py",
)
RECORDS = tuple(  # what a store may import of a capability: its records and its contract
    f"{CORE}.{name}"
    for name in (
        "importer.storage",
        "importer.jobs",
        "importer.external_format",
        "profile.storage",
        "purge.storage",
        "curation.actions",
        "events.cards",
    )
)
CAPABILITY_PACKAGES = ("importer", "profile", "purge", "gate", "blocks", "topics", "remember")


def services_reaching_storage(root: Path) -> list[str]:
    found = []
    for room in CAPABILITIES:
        for path in modules(root, room):
            names = imported_modules(root, path)
            if "sqlite3" in names or any(n.startswith(f"{CORE}.store") for n in names):
                found.append(relative(root, path))
    return found


def rules_in_the_store(root: Path) -> list[str]:
    found = []
    for name in STORE_MODULES:
        path = root / name
        for imported in sorted(imported_modules(root, path)):
            rule = any(imported.startswith(f"{CORE}.{p}.") for p in CAPABILITY_PACKAGES)
            if rule and not any(imported.startswith(r) for r in RECORDS):
                found.append(f"{name}: {imported}")
    return found


def test_the_services_reach_storage_only_through_their_contract() -> None:
    assert services_reaching_storage(PACKAGE) == []


def test_their_store_modules_import_no_rule_module() -> None:
    assert rules_in_the_store(PACKAGE) == []


def test_the_checks_catch_a_break(tmp_path: Path) -> None:
    root = tmp_path / "stratagate_plugin"
    for name in (*STORE_MODULES, "core/purge/service.py"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("", encoding="utf-8")
    (root / "core/purge/service.py").write_text("import sqlite3\n", encoding="utf-8")
    (root / "core/store/purge_rows.py").write_text(
        "from ..purge.words import Needles\nfrom ..purge.storage import TOMBSTONE\n",
        encoding="utf-8",
    )
    assert services_reaching_storage(root) == ["core/purge/service.py"]
    assert rules_in_the_store(root) == [
        "core/store/purge_rows.py: stratagate_plugin.core.purge.words",
        "core/store/purge_rows.py: stratagate_plugin.core.purge.words.Needles",
    ]
