"""Hand-edited profiles: a wrong setting, a bad name or bad bytes is one line naming it."""

from pathlib import Path

import pytest

from stratagate_plugin.cli.main import main
from stratagate_plugin.harness.profiles import profiles_dir


def write_profile(name: str, body: bytes) -> Path:
    path = profiles_dir() / f"{name}.yml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(body)
    return path


def chat(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(["chat", "--message", "hello", *argv])
    return code, capsys.readouterr().err


@pytest.mark.parametrize(
    ("setting", "expected"),
    [
        ("namespace_mode: projet", "namespace_mode: Input should be 'project'"),
        ("blok_turn_size: 4", "blok_turn_size: Extra inputs are not permitted"),
    ],
)
def test_a_wrong_memory_setting_is_one_line_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], setting: str, expected: str
) -> None:
    body = f"plugins: [stratagate-memory]\nsettings:\n  stratagate-memory:\n    {setting}\n"
    write_profile("bad", body.encode())
    code, err = chat(capsys, "--profile", "bad")
    assert code == 2 and expected in err and "Traceback" not in err and err.count("\n") == 1
    assert "invalid literal" not in err


@pytest.mark.parametrize(
    ("setting", "expected"),
    [
        ('block_turn_size: "abc"', "block_turn_size: Input should be a valid integer"),
        ("block_turn_size: 0", "block_turn_size: Input should be greater than or equal to 1"),
        ("agent_memory_enabled: maybe", "agent_memory_enabled: Input should be a valid boolean"),
        ("seal_idle_minutes: -5", "seal_idle_minutes: Input should be greater than or equal to 0"),
    ],
)
def test_a_wrong_tuning_setting_starts_on_its_default_with_a_warning_naming_it(
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
    setting: str,
    expected: str,
) -> None:
    body = f"plugins: [stratagate-memory]\nsettings:\n  stratagate-memory:\n    {setting}\n"
    path = write_profile("bad", body.encode())
    code, err = chat(capsys, "--profile", "bad")
    assert code == 0 and "Traceback" not in err and "invalid literal" not in err
    [warning] = [
        record.getMessage() for record in caplog.records if expected in record.getMessage()
    ]
    assert str(path) in warning and "using the default" in warning


def test_a_profile_with_invalid_utf8_names_its_file(capsys: pytest.CaptureFixture[str]) -> None:
    path = write_profile("latin", b"plugins: [stratagate-memory]\nsystem_prompt: caf\xe9\n")
    code, err = chat(capsys, "--profile", "latin")
    assert code == 2 and str(path) in err and "Traceback" not in err


def test_a_profile_name_ending_in_a_newline_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    code, err = chat(capsys, "--profile", "default\n")
    assert code == 2 and "invalid profile name" in err
