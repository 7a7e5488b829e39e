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


# -- harness: hooks depend on types only, no cycles, the plugin by entry point only -----------

HARNESS = PACKAGE / "harness"
HARNESS_PACKAGE = "stratagate_plugin.harness"


def harness_imports(path: Path) -> set[str]:
    """Every module ``path`` imports, TYPE_CHECKING blocks included (``from . import x`` → x)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = resolve(node, HARNESS_PACKAGE)
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
    return names


def harness_graph() -> dict[str, set[str]]:
    modules = {f"{HARNESS_PACKAGE}.{path.stem}": path for path in HARNESS.glob("*.py")}
    return {name: harness_imports(path) & set(modules) - {name} for name, path in modules.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str]:
    """One import cycle as a path (first module repeated at the end), or ``[]``."""
    done: set[str] = set()

    def visit(name: str, path: list[str]) -> list[str]:
        if name in path:
            return [*path[path.index(name) :], name]
        if name in done:
            return []
        for target in sorted(graph[name]):
            cycle = visit(target, [*path, name])
            if cycle:
                return cycle
        done.add(name)
        return []

    for name in sorted(graph):
        cycle = visit(name, [])
        if cycle:
            return cycle
    return []


def test_harness_import_graph_has_no_cycle() -> None:
    graph = harness_graph()
    assert f"{HARNESS_PACKAGE}.types" in graph["stratagate_plugin.harness.hookspecs"]
    cycle = find_cycle(graph)
    assert not cycle, " -> ".join(cycle)


def test_harness_never_imports_the_memory_plugin() -> None:
    """The plugin arrives by entry point only: no import, no module name in a string."""
    plugin = "stratagate_plugin.memory_plugin"
    for path in HARNESS.glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        texts = {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant)}
        named = harness_imports(path) | {t for t in texts if isinstance(t, str)}
        assert not any(n == plugin or n.startswith(plugin + ".") for n in named), path
