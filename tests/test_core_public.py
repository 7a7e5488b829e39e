"""``stratagate_plugin.core``'s public face: every name in ``__all__`` resolves to the object
its home module defines, the outer layers could take each one from ``core`` instead of a deep
module, and importing ``core`` alone still loads none of the engine (``stratagate --help``)."""

import ast
import importlib
import os
import subprocess
import sys
from pathlib import Path

import stratagate_plugin.core as core

PACKAGE = Path(__file__).resolve().parents[1] / "stratagate_plugin"
LAYERS = ("web", "cli", "memory_plugin")


def test_every_public_name_resolves_to_its_home_object() -> None:
    assert len(core.__all__) == len(set(core.__all__))
    assert sorted(core._HOME_OF) == sorted(core.__all__)
    for name in core.__all__:
        home = importlib.import_module(core._HOME_OF[name], core.__name__)
        assert getattr(core, name) is getattr(home, name), name
        assert name in dir(core)


def test_from_core_import_star_gives_the_public_names() -> None:
    namespace: dict[str, object] = {}
    exec("from stratagate_plugin.core import *", namespace)
    assert set(core.__all__) <= set(namespace)
    assert namespace["StrataGate"] is core.StrataGate


def test_an_unknown_name_is_an_attribute_error() -> None:
    try:
        core.NoSuchThing  # type: ignore[attr-defined]  # noqa: B018
    except AttributeError as error:
        assert "NoSuchThing" in str(error)
    else:
        raise AssertionError("core.NoSuchThing resolved")


def deep_core_imports(path: Path) -> set[str]:
    """Names ``path`` imports from a module under ``core`` (``from ..core.x import Name``)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("core."):
            names.update(alias.name for alias in node.names)
    return names


def test_the_layers_core_types_are_all_public() -> None:
    """The types the web pages, CLI and plugin import most (the façade, its configuration, the
    errors and records) are in ``__all__`` and are the very objects those layers use today."""
    used: set[str] = set()
    for layer in LAYERS:
        for path in (PACKAGE / layer).rglob("*.py"):
            used |= deep_core_imports(path)
    wanted = {"StrataGate", "MemoryConfig", "InvalidInput", "NotFound", "EventCard", "BlockView"}
    assert wanted <= used  # the layers really import these from deep modules
    assert wanted <= set(core.__all__)
    public_used = used & set(core.__all__)
    assert len(public_used) >= 15
    for name in public_used:
        assert getattr(core, name).__module__.startswith("stratagate_plugin.core"), name


def test_importing_core_loads_no_engine_module() -> None:
    script = (
        "import sys, stratagate_plugin.core\n"
        "print(sorted(m for m in sys.modules if m.startswith('stratagate_plugin.core.')))"
    )
    # a plain process: without the PostgreSQL pass's redirection (it imports the engine)
    plain = {key: value for key, value in os.environ.items() if key != "SG_TEST_SERVER_FILES"}
    out = subprocess.run(
        [sys.executable, "-c", script],
        cwd=PACKAGE.parent,
        env=plain,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    assert out.stdout.strip() == "[]"
