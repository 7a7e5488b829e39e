"""docs/architecture.md names every module of the package, and no module that is gone."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "stratagate_plugin"
HEADING = re.compile(r"^### `([\w/]+)/`\s*$")
ROW = re.compile(r"^\| `([\w]+\.py)` \|")


def documented_modules(text: str) -> set[str]:
    """``package/module.py`` for each table row under a ``### `package/` `` heading."""
    found: set[str] = set()
    package = None
    for line in text.splitlines():
        if heading := HEADING.match(line):
            package = heading.group(1)
        elif (row := ROW.match(line)) and package is not None:
            found.add(f"{package}/{row.group(1)}")
    return found


def package_modules(root: Path) -> set[str]:
    return {
        str(path.relative_to(root))
        for path in root.rglob("*.py")
        if path.name != "__init__.py" and "__pycache__" not in path.parts
    }


def test_the_module_map_matches_the_package() -> None:
    documented = documented_modules((ROOT / "docs" / "architecture.md").read_text("utf-8"))
    actual = package_modules(PACKAGE)
    assert sorted(actual - documented) == [], "modules missing from docs/architecture.md"
    assert sorted(documented - actual) == [], "docs/architecture.md names modules that are gone"


def test_the_map_reader_sees_a_missing_or_stale_row(tmp_path: Path) -> None:
    (tmp_path / "core").mkdir()
    (tmp_path / "core" / "kept.py").write_text("")
    (tmp_path / "core" / "new.py").write_text("")
    doc = "### `core/`\n\n| module | why |\n| --- | --- |\n| `kept.py` | x |\n| `gone.py` | y |\n"
    assert package_modules(tmp_path) - documented_modules(doc) == {"core/new.py"}
    assert documented_modules(doc) - package_modules(tmp_path) == {"core/gone.py"}


PROSE_PATH = re.compile(r"`((?:[\w]+/)+[\w]+\.py)`")
PROSE_MODULE = re.compile(r"`([\w]+\.py)`")
CAPABILITY_CALL = re.compile(r"`memory\.([a-z_]+)(?:\.([a-z_]+))?")


def prose_lines(text: str) -> list[tuple[str | None, str]]:
    """Each line outside the tables, with the ``### `package/` `` it stands under."""
    lines, package = [], None
    for line in text.splitlines():
        if heading := HEADING.match(line):
            package = heading.group(1)
        elif not line.startswith("|"):
            lines.append((package, line))
    return lines


def missing_prose_modules(text: str, package_root: Path, repo_root: Path) -> list[str]:
    """Paths named in the prose (``core/events/service.py``, ``tests/test_x.py``) that do
    not exist, and bare module names under a package heading that the package lacks
    (nor any package names)."""
    known = {p.name for p in package_root.rglob("*.py")}
    missing = []
    for line in text.splitlines():  # tables too: the composed engine's table names paths
        for path in PROSE_PATH.findall(line):
            bases = (package_root, package_root / "core", repo_root)
            if not any((base / path).exists() for base in bases):
                missing.append(path)
    for package, line in prose_lines(text):
        for name in PROSE_MODULE.findall(line):
            here = package is not None and (package_root / package / name).exists()
            if package is not None and not here and name not in known:
                missing.append(f"{package}/{name}")
    return missing


def test_the_prose_names_modules_that_exist() -> None:
    text = (ROOT / "docs" / "architecture.md").read_text("utf-8")
    assert missing_prose_modules(text, PACKAGE, ROOT) == []


def test_the_prose_names_capabilities_the_engine_composes() -> None:
    """``memory.events.search(…)`` in the text: ``StrataGate`` has ``events``, and the
    capability's class has ``search``."""
    from stratagate_plugin.core.memory import StrataGate

    wiring = StrataGate.__init__.__code__.co_names
    text = (ROOT / "docs" / "architecture.md").read_text("utf-8")
    files = {"json", "jsonl", "md", "py", "db"}  # `memory.jsonl` names a file, not a capability
    named = {(cap, method) for cap, method in CAPABILITY_CALL.findall(text) if cap not in files}
    assert named, "the text shows how a caller reaches a capability"
    classes = _capability_classes()
    assert set(classes) <= {cap for cap, _ in named}, "a capability the text does not show"
    for cap, method in sorted(named):
        assert cap in wiring and cap in classes, f"memory.{cap} is not a capability"
        assert not method or hasattr(classes[cap], method), f"memory.{cap}.{method} is gone"


def _capability_classes() -> dict[str, type]:
    """``attribute → service class`` as ``StrataGate.__init__`` wires them."""
    import ast
    import importlib

    source = (PACKAGE / "core" / "memory.py").read_text("utf-8")
    memory = importlib.import_module("stratagate_plugin.core.memory")
    found = {}
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            target, call = node.targets[0], node.value
            wired = isinstance(target, ast.Attribute) and isinstance(call.func, ast.Name)
            if wired and call.func.id.endswith("Service"):
                found[target.attr] = getattr(memory, call.func.id)
    return found


def test_the_prose_reader_sees_a_stale_path(tmp_path: Path) -> None:
    (tmp_path / "core").mkdir()
    (tmp_path / "core" / "kept.py").write_text("")
    doc = "### `core/`\n\nSee `core/kept.py`, `core/gone.py` and `kept.py`, `lost.py`.\n"
    assert missing_prose_modules(doc, tmp_path, tmp_path) == ["core/gone.py", "core/lost.py"]
