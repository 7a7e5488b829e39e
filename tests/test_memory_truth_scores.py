"""Issue 23's bar, kept: every memory-truth scenario (benchmarks/memory_truth.py, 72 in six
categories, English and Chinese, four through the CLI) passes — sources, no echo, repeats,
changes of mind, abstention and import merges, each checked on the stored state and the
agent's answer."""

import pytest

from benchmarks import memory_truth
from benchmarks.truth_scenarios import Scenario, all_scenarios

SCENARIOS = all_scenarios()


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.id for s in SCENARIOS])
async def test_scenario_passes(scenario: Scenario) -> None:
    outcome = await memory_truth.run_scenario(scenario)
    assert outcome.passed, (outcome.failures, outcome.answer)
