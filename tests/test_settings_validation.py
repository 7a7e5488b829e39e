"""A settings value can no longer brick the app (issue 24).

``POST /memory/settings`` with ``block_decay_lambda=inf`` answered "Saved" and wrote
``null`` into the profile (pydantic dumps inf as null); every command then exited 2 until the
file was edited by hand. Now every value is checked (finite, in range) before anything is
saved, a profile with a wrong tuning value starts on that value's default with a warning
naming the file, the field, the value and the rule, and ``doctor --fix-profile`` repairs it.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from webapp import memory_of, post, web_app

from stratagate_plugin.cli.main import main
from stratagate_plugin.harness.profiles import Profile, load_profile, profile_path, save_profile
from stratagate_plugin.memory_plugin.settings import DEFAULT_SETTINGS, MemorySettings
from stratagate_plugin.web.memory.settings_page import checked_values

NUMERIC = ("block_turn_size", "block_decay_lambda", "agent_memory_weight")
BAD_VALUES = ("inf", "-inf", "nan", "Infinity", "-1", "1e308", "1" + "0" * 30, "abc", "", "0x10")
FORM = {
    "block_turn_size": "6",
    "block_decay_lambda": "0.3",
    "agent_memory_weight": "1",
    "show_status_rows": "true",
    "show_citations": "true",
}
ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("value", BAD_VALUES)
@pytest.mark.parametrize("field", NUMERIC)
async def test_a_bad_value_is_refused_naming_its_field_and_nothing_is_saved(
    tmp_path: Path, field: str, value: str
) -> None:
    async with web_app(tmp_path) as (_, host, client):
        before = profile_path("default").read_bytes()
        config = memory_of(host).config
        answer = await post(client, "/memory/settings", data={**FORM, field: value})
        assert answer.status_code == 400, (field, value)
        assert "Nothing was saved" in answer.text and field in answer.text
        assert profile_path("default").read_bytes() == before
        assert memory_of(host).config == config
    load_profile("default")  # and the profile still loads


@settings(max_examples=200, derandomize=True, deadline=None)
@given(
    field=st.sampled_from(NUMERIC),
    value=st.one_of(
        st.floats().map(repr), st.integers().map(str), st.text(max_size=12), st.just("1e999")
    ),
)
def test_whatever_the_form_accepts_reads_back_as_itself(field: str, value: str) -> None:
    checked, problems = checked_values(DEFAULT_SETTINGS, {field: value})
    if problems:
        assert all(problem.startswith(field) for problem in problems)
        return
    dumped = Profile(settings={"stratagate-memory": checked}).model_dump(mode="json")  # as saved
    written = yaml.safe_load(yaml.safe_dump(dumped))["settings"]["stratagate-memory"]
    assert MemorySettings.model_validate(written).model_dump()[field] == checked[field]


def broken_profile(**memory_settings: object) -> Path:
    """The default profile with these memory settings, written as a hand edit (.inf, .nan)."""
    path = profile_path("default")
    data = save_profile(load_profile("default")).model_dump(mode="json", exclude_none=True)
    data["settings"] = {"stratagate-memory": {"block_turn_size": 3, **memory_settings}}
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    return path


def run_cli(tmp_path: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "stratagate_plugin.cli.main", *argv]
    return subprocess.run(
        command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )


def test_events_starts_on_a_default_and_names_the_bad_field(tmp_path: Path) -> None:
    path = broken_profile(block_decay_lambda=None)  # what the settings form wrote
    done = run_cli(tmp_path, "events")
    assert done.returncode == 0, done.stderr
    [warning] = [line for line in done.stderr.splitlines() if "warning" in line]
    assert str(path) in warning and "block_decay_lambda" in warning and "None" in warning
    assert "valid number" in warning and "doctor --fix-profile" in warning
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("setting", "rule"),
    [
        ({"block_decay_lambda": float("inf")}, "finite number"),
        ({"seal_idle_minutes": float("nan")}, "finite number"),
        ({"seal_idle_minutes": 1e300}, "less than or equal"),
        ({"derive_concurrency": "many"}, "valid integer"),
        ({"structured_task_timeout_s": 0.5}, "greater than or equal to 1"),
    ],
)
def test_a_wrong_tuning_value_falls_back_to_its_default_with_a_warning(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
    setting: dict[str, object],
    rule: str,
) -> None:
    path = broken_profile(**setting)
    code = main(["events", "--db", str(tmp_path / "m.db")])
    [field] = setting
    assert code == 0, capsys.readouterr().err
    [warning] = [record.getMessage() for record in caplog.records if field in record.getMessage()]
    assert str(path) in warning and rule in warning


@pytest.mark.parametrize(
    ("setting", "shown"),
    [
        ({"namespace_mode": "projet"}, "'projet'"),  # a default would write to another space
        ({"namespace_mod": "global"}, "Extra inputs"),  # a typo of one
    ],
)
def test_a_wrong_value_where_no_default_is_safe_is_refused_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], setting: dict[str, object], shown: str
) -> None:
    path = broken_profile(**setting)
    code = main(["events", "--db", str(tmp_path / "m.db")])
    err = capsys.readouterr().err
    [field] = setting
    assert code == 2 and str(path) in err and field in err and shown in err
    assert "doctor --fix-profile" in err and err.count("\n") == 1


def test_doctor_fix_profile_drops_the_bad_fields_and_keeps_a_copy(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = broken_profile(block_decay_lambda=None, namespace_mode="projet", blok=1)
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["model"] = {"base_url": "http://127.0.0.1:9/v1", "model": "m", "timeout_s": -4}
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    original = path.read_bytes()
    assert main(["doctor", "--fix-profile"]) == 0
    out = capsys.readouterr().out
    for name in ("block_decay_lambda", "namespace_mode", "blok", "model.timeout_s"):
        assert name in out
    assert Path(f"{path}.bak").read_bytes() == original
    repaired = load_profile("default")
    section = repaired.settings["stratagate-memory"]
    assert section == {"block_turn_size": 3}  # the good value stays
    assert repaired.model is not None and repaired.model.base_url == "http://127.0.0.1:9/v1"
    assert repaired.plugins == ["stratagate-memory"]
    assert main(["events", "--db", str(tmp_path / "m.db")]) == 0
    assert "warning" not in capsys.readouterr().err
    assert main(["doctor", "--fix-profile"]) == 0  # nothing left to fix
    assert "nothing to fix" in capsys.readouterr().out


@pytest.mark.parametrize("field", ["timeout_s", "retry_max_delay_s", "retry_max_total_s"])
@pytest.mark.parametrize("value", [float("inf"), float("nan"), 1e308])
def test_the_model_endpoint_refuses_a_time_that_is_not_finite_and_bounded(
    field: str, value: float
) -> None:
    from pydantic import ValidationError

    from stratagate_plugin.core.llm.endpoint import HttpModelConfig

    with pytest.raises(ValidationError, match=field):
        HttpModelConfig(base_url="http://127.0.0.1:9/v1", model="m", **{field: value})
