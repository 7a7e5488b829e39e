"""Layering: core is framework-free; only core/store imports aiosqlite, only core/llm/http httpx."""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "stratagate_plugin"
FORBIDDEN_IN_CORE = (
    "stratagate_plugin.host",
    "stratagate_plugin.web",
    "stratagate_plugin.cli",
    "pluggy",
    "starlette",
    "jinja2",
    "uvicorn",
)


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    package = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts[:-1])
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            names.add(resolve(node, package))
    return names


def resolve(node: ast.ImportFrom, package: str) -> str:
    if node.level == 0:
        return node.module or ""
    base = package.split(".")[: len(package.split(".")) - node.level + 1]
    return ".".join([*base, node.module] if node.module else base)


def users_of(prefix: str) -> set[str]:
    return {
        str(path.relative_to(PACKAGE))
        for path in PACKAGE.rglob("*.py")
        if any(name == prefix or name.startswith(prefix + ".") for name in imported_modules(path))
    }


def test_core_imports_no_framework_or_outer_layer() -> None:
    for path in (PACKAGE / "core").rglob("*.py"):
        for name in imported_modules(path):
            assert not name.startswith(FORBIDDEN_IN_CORE), f"{path} imports {name}"


def test_only_the_store_imports_aiosqlite() -> None:
    assert all(path.startswith("core/store/") for path in users_of("aiosqlite"))


def test_only_the_http_model_imports_httpx() -> None:
    assert users_of("httpx") <= {"core/llm/http.py"}


def test_host_and_web_never_import_each_other() -> None:
    for layer, other in (("host", "web"), ("web", "host")):
        for path in (PACKAGE / layer).rglob("*.py"):
            names = imported_modules(path)
            assert not any(n.startswith(f"stratagate_plugin.{other}") for n in names), path
