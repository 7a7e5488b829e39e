"""plugin.yml agrees with the code: name, version, entry module, hooks and tools."""

import importlib
from pathlib import Path
from typing import Any

import yaml

import stratagate_plugin

ROOT = Path(__file__).resolve().parents[1]


def manifest() -> dict[str, Any]:
    data = yaml.safe_load((ROOT / "plugin.yml").read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def test_manifest_version_matches_the_package() -> None:
    assert manifest()["version"] == stratagate_plugin.__version__


def entry_module() -> Any:
    """The module part of ``entry`` (``module:Class``)."""
    return importlib.import_module(manifest()["entry"].partition(":")[0])


def test_manifest_entry_module_names_the_plugin() -> None:
    module = entry_module()
    assert manifest()["name"] == module.PLUGIN_NAME


def test_manifest_hooks_and_tools_match_the_plugin() -> None:
    module = entry_module()
    assert sorted(manifest()["hooks"]) == sorted(module.HOOKS)
    assert sorted(manifest()["tools"]) == sorted(module.TOOLS)


def test_manifest_declares_a_host_compatibility_range() -> None:
    compatible = manifest()["host"]["compatible"]
    assert compatible.startswith(">=") and ",<" in compatible
