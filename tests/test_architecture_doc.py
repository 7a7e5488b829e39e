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
