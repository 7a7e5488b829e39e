"""The rooms' rules (docs/architecture.md), each checked on the package and shown to catch a
break on a small made-up package.

- core imports nothing of harness, memory_plugin, mcp_server, web or cli, nor a web or plugin
  framework (the MCP SDK included);
- core's rule modules import no store (only ``service.py``, ``memory.py``, ``service_base.py``);
- only ``core/store/`` executes SQL; only it imports aiosqlite and psycopg; only
  ``core/llm/http.py`` httpx;
- the harness never imports the memory plugin or the MCP server, nor anything of core (its
  own chat models, home, times and text rules; the memory plugin adapts core to it), and its
  import graph has no cycle; only ``mcp_server/`` imports the MCP SDK (the CLI reaches it
  through that room);
- the web shell (the harness's app) imports no plugin and no memory page, and of core only
  leaf modules (errors, times, text rules: modules importing nothing of the package), never
  the engine; the memory pages call the engine's services, never ``core/store/``;
- migration steps live in ``core/store/migrations/`` (PostgreSQL's in
  ``core/store/postgres/migrations/``) and import nothing of the package but the runner's
  own helper (``script.py``): history is frozen, whatever the live code becomes.
"""

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "stratagate_plugin"
NAME = "stratagate_plugin"
OUTER = tuple(f"{NAME}.{room}" for room in ("harness", "memory_plugin", "mcp_server", "web", "cli"))
FRAMEWORKS = ("pluggy", "starlette", "jinja2", "uvicorn", "mcp", "mcp_types")
SERVICE_MODULES = {"service.py", "memory.py", "service_base.py"}
SQL_CALLS = {"execute", "executemany", "executescript"}
STEP_NAME = re.compile(r"^_?m\d{3}_")
MIGRATIONS = "core/store/migrations"
MIGRATION_DIRS = (MIGRATIONS, "core/store/postgres/migrations")
STEP_HELPERS = (f"{NAME}.core.store.migrations.script",)
SQL_TEXT = re.compile(r"^\s*(SELECT|INSERT|UPDATE|DELETE|CREATE|DROP|ALTER|PRAGMA|WITH)\s")


def modules(root: Path, room: str = "") -> Iterator[Path]:
    yield from sorted(
        path for path in (root / room).rglob("*.py") if "__pycache__" not in path.parts
    )


def module_name(root: Path, path: Path) -> str:
    parts = path.relative_to(root.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(root: Path, path: Path) -> set[str]:
    """Every module ``path`` imports (TYPE_CHECKING blocks too; ``from . import x`` → ``.x``)."""
    name = module_name(root, path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = resolve(node, package)
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
    return names


def resolve(node: ast.ImportFrom, package: str) -> str:
    if node.level == 0:
        return node.module or ""
    parts = package.split(".")
    base = parts[: len(parts) - node.level + 1]
    return ".".join([*base, node.module] if node.module else base)


def names_any(names: set[str], prefixes: tuple[str, ...]) -> bool:
    return any(n == p or n.startswith(p + ".") for n in names for p in prefixes)


def relative(root: Path, path: Path) -> str:
    return str(path.relative_to(root))


# -- the checks: each returns the offending modules ------------------------------------------


def core_importing_outer_layers(root: Path) -> list[str]:
    return [
        relative(root, path)
        for path in modules(root, "core")
        if names_any(imported_modules(root, path), (*OUTER, *FRAMEWORKS))
    ]


def rule_modules_importing_the_store(root: Path) -> list[str]:
    store = (f"{NAME}.core.store",)
    return [
        relative(root, path)
        for path in modules(root, "core")
        if path.name not in SERVICE_MODULES
        and "store" not in path.relative_to(root / "core").parts
        and names_any(imported_modules(root, path), store)
    ]


def sql_outside_the_store(root: Path) -> list[str]:
    """Modules outside ``core/store/`` that call ``execute*`` or hold an SQL statement."""
    found = []
    for path in modules(root):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        inside = relative(root, path).startswith("core/store/")
        if not inside and any(runs_sql(node) for node in ast.walk(tree)):
            found.append(relative(root, path))
    return found


def runs_sql(node: ast.AST) -> bool:
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return node.func.attr in SQL_CALLS
    return (
        isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and bool(SQL_TEXT.match(node.value))
    )


def users_of(root: Path, prefix: str) -> set[str]:
    return {
        relative(root, path)
        for path in modules(root)
        if names_any(imported_modules(root, path), (prefix,))
    }


def harness_naming_the_plugin(root: Path) -> list[str]:
    """Harness modules importing the memory plugin or the MCP server, or naming one in a
    string (importlib)."""
    plugin = (f"{NAME}.memory_plugin", f"{NAME}.mcp_server")
    found = []
    for path in modules(root, "harness"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        texts = {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant)}
        named = imported_modules(root, path) | {t for t in texts if isinstance(t, str)}
        if names_any(named, plugin):
            found.append(relative(root, path))
    return found


def harness_importing_core(root: Path) -> list[str]:
    return [
        relative(root, path)
        for path in modules(root, "harness")
        if names_any(imported_modules(root, path), (f"{NAME}.core",))
    ]


def module_file(root: Path, name: str) -> Path | None:
    """The file of module ``name`` (or of the module holding ``name``), if in ``root``."""
    parts = name.split(".")[1:]
    while parts:
        for candidate in (
            root.joinpath(*parts).with_suffix(".py"),
            root.joinpath(*parts, "__init__.py"),
        ):
            if candidate.is_file():
                return candidate
        parts = parts[:-1]
    return None


def shell_reaching_into_core(root: Path) -> list[str]:
    """Shell modules importing a core module that itself imports something of the package."""
    found = []
    for path in modules(root, "web/shell"):
        used = {n for n in imported_modules(root, path) if names_any({n}, (f"{NAME}.core",))}
        files = {module_file(root, name) for name in used}
        if any(f is None or names_any(imported_modules(root, f), (NAME,)) for f in files):
            found.append(relative(root, path))
    return found


def web_layers_broken(root: Path) -> list[str]:
    """Shell modules naming the plugin or its pages; memory pages importing the store (they
    are the plugin's own pages, so its settings rules are theirs to use)."""
    shell = (f"{NAME}.memory_plugin", f"{NAME}.web.memory", f"{NAME}.core.store")
    pages = (f"{NAME}.core.store",)
    found = [
        relative(root, path)
        for path in modules(root, "web/shell")
        if names_any(imported_modules(root, path), shell)
    ]
    found += [
        relative(root, path)
        for path in modules(root, "web/memory")
        if names_any(imported_modules(root, path), pages)
    ]
    return found


def migration_steps_not_frozen(root: Path) -> list[str]:
    """Modules defining a migration step (``m001_…``) outside ``core/store/migrations/``, or
    importing anything of the package there but the runner's helper."""
    found = []
    for path in modules(root):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        steps = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]
        if not any(STEP_NAME.match(step.name) for step in steps):
            continue
        place = relative(root, path)
        inside = place.startswith(tuple(f"{d}/" for d in MIGRATION_DIRS))
        inside = inside and path.name != "__init__.py"
        live = {
            n
            for n in imported_modules(root, path)
            if names_any({n}, (NAME,)) and not names_any({n}, STEP_HELPERS)
        }
        if not inside or live:
            found.append(relative(root, path))
    return found


def harness_graph(root: Path) -> dict[str, set[str]]:
    found = {module_name(root, path): path for path in modules(root, "harness")}
    return {
        name: (imported_modules(root, path) & set(found)) - {name} for name, path in found.items()
    }


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


# -- the package keeps the rules --------------------------------------------------------------


def test_core_imports_no_outer_layer_or_framework() -> None:
    assert core_importing_outer_layers(PACKAGE) == []


def test_rule_modules_import_no_store() -> None:
    assert rule_modules_importing_the_store(PACKAGE) == []


def test_only_the_store_runs_sql() -> None:
    assert sql_outside_the_store(PACKAGE) == []


def test_only_the_store_imports_aiosqlite() -> None:
    users = users_of(PACKAGE, "aiosqlite")
    assert users and all(path.startswith("core/store/") for path in users)


def test_only_the_store_imports_psycopg() -> None:
    users = {
        relative(PACKAGE, path)
        for path in modules(PACKAGE)
        if names_any(imported_modules(PACKAGE, path), ("psycopg", "psycopg_pool"))
    }
    assert users and all(path.startswith("core/store/") for path in users)


def test_only_the_http_model_imports_httpx() -> None:
    assert users_of(PACKAGE, "httpx") == {"core/llm/http.py"}


def test_harness_never_imports_the_memory_plugin() -> None:
    assert harness_naming_the_plugin(PACKAGE) == []


def test_only_the_mcp_server_imports_the_mcp_sdk() -> None:
    users = users_of(PACKAGE, "mcp") | users_of(PACKAGE, "mcp_types")
    assert users and all(path.startswith("mcp_server/") for path in users)


def test_web_shell_knows_no_plugin_and_pages_use_services_only() -> None:
    assert (PACKAGE / "web" / "shell").is_dir() and (PACKAGE / "web" / "memory").is_dir()
    assert web_layers_broken(PACKAGE) == []


def test_migration_steps_are_frozen() -> None:
    assert (PACKAGE / MIGRATIONS).is_dir()
    assert migration_steps_not_frozen(PACKAGE) == []


def test_the_harness_imports_nothing_of_core() -> None:
    assert harness_importing_core(PACKAGE) == []


def test_the_web_shell_uses_only_core_leaf_modules() -> None:
    assert shell_reaching_into_core(PACKAGE) == []


def test_harness_import_graph_has_no_cycle() -> None:
    graph = harness_graph(PACKAGE)
    assert graph[f"{NAME}.harness.hookspecs"] <= {f"{NAME}.harness.types"}
    cycle = find_cycle(graph)
    assert not cycle, " -> ".join(cycle)


# -- each check catches a break ---------------------------------------------------------------

BROKEN = {
    "core/events/ranking.py": "from ..store import event_rows\n",
    "core/blocks/service.py": "from ..store import block_rows\nfrom ...harness import types\n",
    "core/text/terms.py": "import starlette\n",
    "core/gate/service.py": 'ROWS = "SELECT id FROM batches"\n',
    "core/remember/service.py": "def f(raw):\n    raw.execute('x')\n",
    "core/store/rows.py": "def g(raw):\n    raw.execute('SELECT 1')\n",
    "core/llm/chat.py": "import httpx\n",
    "harness/pm.py": "PLUGINS = ('stratagate_plugin.memory_plugin.hooks',)\n",
    "harness/agent.py": "from ..mcp_server import server\n",
    "core/clock.py": "import mcp_types\n",
    "harness/hookspecs.py": "from .runtime import Host\n",
    "harness/runtime.py": "from . import types\n",
    "harness/types.py": "import typing\nif typing.TYPE_CHECKING:\n    from .hookspecs import x\n",
    "web/shell/chat.py": "from ..memory import section\n",
    "web/memory/events.py": "from ...core.store import event_rows\n",
    "web/memory/pages.py": "from ...core.memory import StrataGate\n",
    "core/store/migrations/steps_001.py": "from .script import run\ndef m001_a(raw): run(raw)\n",
    "core/store/migrations/steps_002.py": "from ..topic_rows import T\ndef m002_b(raw): pass\n",
    "core/store/old_steps.py": "def _m003_c(raw):\n    pass\n",
    "harness/folding.py": "from ..core.records import ToolTrace\n",
    "harness/sessions.py": "from ..core import clock\n",
    "core/errors.py": "class NotFound(Exception):\n    pass\n",
    "core/memory.py": "from .store import db\n",
    "web/shell/app.py": "from ...core.errors import NotFound\n",
    "web/shell/templating.py": "from ...core.memory import StrataGate\n",
}


@pytest.fixture
def broken(tmp_path: Path) -> Path:
    root = tmp_path / NAME
    for relative_path, text in BROKEN.items():
        path = root / relative_path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def test_the_checks_catch_each_break(broken: Path) -> None:
    assert core_importing_outer_layers(broken) == [
        "core/blocks/service.py",
        "core/clock.py",
        "core/text/terms.py",
    ]
    assert rule_modules_importing_the_store(broken) == ["core/events/ranking.py"]
    assert sql_outside_the_store(broken) == ["core/gate/service.py", "core/remember/service.py"]
    assert users_of(broken, "httpx") == {"core/llm/chat.py"}
    assert users_of(broken, "mcp_types") == {"core/clock.py"}
    assert harness_naming_the_plugin(broken) == ["harness/agent.py", "harness/pm.py"]
    assert web_layers_broken(broken) == ["web/shell/chat.py", "web/memory/events.py"]
    assert migration_steps_not_frozen(broken) == [
        "core/store/migrations/steps_002.py",
        "core/store/old_steps.py",
    ]
    assert harness_importing_core(broken) == ["harness/folding.py", "harness/sessions.py"]
    assert shell_reaching_into_core(broken) == ["web/shell/templating.py"]
    cycle = find_cycle(harness_graph(broken))
    assert cycle[0] == cycle[-1] and f"{NAME}.harness.hookspecs" in cycle


def test_the_frozen_check_covers_postgres_steps(tmp_path: Path) -> None:
    steps = tmp_path / NAME / "core/store/postgres/migrations"
    steps.mkdir(parents=True)
    (steps / "steps_001.py").write_text("import psycopg\ndef m001_a(conn): pass\n")
    (steps / "steps_002.py").write_text("from ...rows import R\ndef m002_b(conn): pass\n")
    assert migration_steps_not_frozen(tmp_path / NAME) == [
        "core/store/postgres/migrations/steps_002.py"
    ]
