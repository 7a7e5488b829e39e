"""Profiles, plugin discovery by entry point, and the plugin.yml compatibility check."""

import argparse
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest
import yaml

from stratagate_plugin.cli import chat_command, main, plugin_command
from stratagate_plugin.harness.errors import HostError
from stratagate_plugin.harness.manifest import (
    HOST_VERSION,
    Manifest,
    check_compatible,
    check_plugin,
    find_manifest,
    installed_plugins,
    load_plugin,
    version_in_range,
)
from stratagate_plugin.harness.profiles import load_profile, profile_path
from stratagate_plugin.harness.runtime import Host
from stratagate_plugin.memory_plugin.hooks import MemoryPlugin

MEMORY = "stratagate-memory"


@pytest.fixture(autouse=True)
def _commands_registered(monkeypatch: pytest.MonkeyPatch) -> None:
    """Register chat/plugin in the CLI when cli/main.py does not list them (yet)."""
    build = main.build_parser

    def build_parser() -> argparse.ArgumentParser:
        parser = build()
        commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        for name, module in (("chat", chat_command), ("plugin", plugin_command)):
            if name not in commands.choices:
                module.register(commands)
        return parser

    monkeypatch.setattr(main, "build_parser", build_parser)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def manifest(compatible: str = ">=0.1,<0.2", host: str = "stratagate-harness") -> Manifest:
    data = {
        "name": "x",
        "version": "1.0",
        "entry": "x",
        "host": {"name": host, "compatible": compatible},
    }
    return Manifest.model_validate(data)


def test_profile_add_list_remove_via_cli(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "plugin", "--profile", "web", "list")[1].split() == [MEMORY, "0.1.0", "-"]
    code, out, _ = run(capsys, "plugin", "--profile", "web", "add", MEMORY)
    assert code == 0 and out == f"{MEMORY} 0.1.0: enabled in profile web\n"
    assert "already enabled" in run(capsys, "plugin", "--profile", "web", "add", MEMORY)[1]
    assert yaml.safe_load(profile_path("web").read_text())["plugins"] == [MEMORY]
    assert run(capsys, "plugin", "--profile", "web", "list")[1].split() == [
        MEMORY,
        "0.1.0",
        "enabled",
    ]
    assert run(capsys, "plugin", "--profile", "web", "remove", MEMORY)[0] == 0
    assert load_profile("web").plugins == []


def test_profile_cli_errors_are_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "plugin", "--profile", "web", "add", "no-such-plugin")
    assert code == 2 and err == (
        "stratagate: error: plugin 'no-such-plugin' is not installed "
        f"(installed plugins: {MEMORY})\n"
    )
    code, _, err = run(capsys, "plugin", "--profile", "web", "remove", MEMORY)
    assert code == 2 and "is not enabled in profile 'web'" in err
    code, _, err = run(capsys, "plugin", "--profile", "../etc", "list")
    assert code == 2 and "invalid profile name" in err


def test_profile_default_is_created_with_the_builtin_plugin() -> None:
    assert load_profile("default").plugins == [MEMORY]
    assert profile_path("default").exists()
    assert load_profile("other").plugins == []


def test_profile_invalid_file_gives_a_clear_error() -> None:
    path = profile_path("bad")
    path.parent.mkdir(parents=True)
    path.write_text("plugins: [a]\nmodle: {}\n")
    with pytest.raises(HostError, match=r"invalid profile .*bad\.yml: modle: Extra inputs"):
        load_profile("bad")


def test_profile_model_and_settings_round_trip() -> None:
    path = profile_path("m")
    path.parent.mkdir(parents=True)
    model = {"base_url": "http://127.0.0.1:9/v1/", "model": "m", "api_key_env": "KEY"}
    path.write_text(yaml.safe_dump({"plugins": [], "settings": {"x": {"a": 1}}, "model": model}))
    profile = load_profile("m")
    assert profile.model is not None and profile.model.base_url == "http://127.0.0.1:9/v1"
    assert profile.settings == {"x": {"a": 1}}


def test_profile_entry_point_discovery_finds_the_builtin_plugin() -> None:
    point = installed_plugins()[MEMORY]
    assert point.value == "stratagate_plugin.memory_plugin.hooks:MemoryPlugin"
    assert find_manifest(point).name == MEMORY
    assert check_plugin(MEMORY).version == HOST_VERSION
    assert load_plugin(MEMORY) is MemoryPlugin


async def test_profile_host_loads_enabled_plugins(tmp_path: Path) -> None:
    profile = load_profile("default")
    async with Host.from_profile(profile, cwd=tmp_path) as host:
        assert isinstance(host.pm.get_plugin(MEMORY), MemoryPlugin)
        host.pm.check_pending()


def test_profile_each_host_gets_its_own_plugin_instance(tmp_path: Path) -> None:
    profile = load_profile("default")
    first, second = (Host.from_profile(profile, cwd=tmp_path) for _ in range(2))
    assert first.pm.get_plugin(MEMORY) is not second.pm.get_plugin(MEMORY)


def test_profile_manifest_must_name_the_entry_point() -> None:
    stray = EntryPoint(name="other", value="stratagate_plugin.host.elsewhere", group="g")
    with pytest.raises(HostError, match=r"no plugin\.yml for stratagate_plugin\.host\.elsewhere"):
        find_manifest(stray)


def test_profile_incompatible_plugin_is_refused_clearly(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(HostError) as caught:
        check_compatible(manifest(">=0.2,<0.3"))
    assert str(caught.value) == (
        "plugin 'x' 1.0 needs stratagate-harness >=0.2,<0.3, but this host is 0.1.0; "
        "install a matching version"
    )
    with pytest.raises(HostError, match="is for host 'dsh'"):
        check_compatible(manifest(host="dsh"))
    monkeypatch.setattr("stratagate_plugin.harness.manifest.HOST_VERSION", "0.2.0")
    with pytest.raises(HostError, match=r"this host is 0\.2\.0"):
        check_plugin(MEMORY)


@pytest.mark.parametrize(
    ("version", "spec", "ok"),
    [
        ("0.1.0", ">=0.1,<0.2", True),
        ("0.1.9", ">=0.1,<0.2", True),
        ("0.2.0", ">=0.1,<0.2", False),
        ("0.0.9", ">=0.1,<0.2", False),
        ("1.2", "==1.2.0", True),
        ("1.2.1", "!=1.2.1", False),
        ("2.0.0rc1", ">1.9", True),
        ("0.1.0", "<=0.1", True),
        ("0.1.0rc1", ">=0.1,<0.2", False),
        ("0.1.0", "~=0.1", True),
        ("0.1.5", "~=0.1.0", True),
        ("0.2.0", "~=0.1.0", False),
    ],
)
def test_profile_version_range(version: str, spec: str, ok: bool) -> None:
    assert version_in_range(version, spec) is ok


def test_profile_unreadable_range_is_an_error() -> None:
    with pytest.raises(HostError) as caught:
        check_compatible(manifest(">=0.1;<0.2"))
    assert str(caught.value) == (
        "cannot read the compatibility range '>=0.1;<0.2' (use e.g. >=0.1,<0.2)"
    )
