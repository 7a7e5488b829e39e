"""The fault matrix's short version (issue #13), run in CI: the same scenarios as
``benchmarks/faults.py`` with a few kill points, a few hundred fuzz cases, seconds of
concurrent writers and one pass over the bad model replies. Each must show zero turns
lost, nothing stored twice, a sound file, no traceback and no crash."""

import json
import random
from pathlib import Path

import pytest

from benchmarks.fault_parts import kills
from benchmarks.fault_parts.bad_model import bad_model
from benchmarks.fault_parts.concurrent import concurrent_writers
from benchmarks.fault_parts.fuzz import fuzz_all
from benchmarks.fault_parts.results import Row

KILLS = 3
FUZZ_CASES = 100
ENTRANCES = (
    "ingest file",
    "ingest command",
    "structured reply",
    "chat reply",
    "tool arguments",
    "profile yaml",
    "time expressions",
)
TARGETS = {
    "ingest": (kills.kill_ingest, 300),
    "bursts": (kills.kill_bursts, 600),
    "process": (kills.kill_process, 60),
}


def assert_all_zero(*rows: Row) -> None:
    failing = {row.scenario: row.failures() for row in rows if row.failures()}
    details = {row.scenario: row.details for row in rows if row.failures()}
    assert not failing, f"{failing}\n{json.dumps(details, ensure_ascii=False)[:4000]}"


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_a_sigkill_anywhere_loses_and_doubles_nothing(target: str, tmp_path: Path) -> None:
    run, turns = TARGETS[target]
    row = run(KILLS, random.Random(f"ci:{target}"), tmp_path, 2, turns)
    assert row.kill_points == KILLS
    assert_all_zero(row)


def test_three_writers_on_one_database_keep_every_acknowledged_turn(tmp_path: Path) -> None:
    row = concurrent_writers(tmp_path, seconds=5)
    assert row.acknowledged
    assert_all_zero(row)


def test_a_misbehaving_model_server_never_crashes_chat_or_process(tmp_path: Path) -> None:
    chat, process = bad_model(tmp_path, cycles=1)
    assert chat.acknowledged
    assert_all_zero(chat, process)


@pytest.mark.parametrize("entrance", ENTRANCES)
def test_a_fuzzed_entrance_raises_only_its_own_errors(entrance: str) -> None:
    [row] = fuzz_all(FUZZ_CASES, seed=0, only=entrance)
    assert row.fuzz_cases == FUZZ_CASES
    assert_all_zero(row)
