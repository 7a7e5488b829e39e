"""The background worker yields between jobs (issue 29): a pass given a ``pause`` awaits
it after every job it runs, derivation, graph and topic jobs alike, so foreground requests
(``core/foreground.py``) get the event loop and the writer between two jobs."""

from pathlib import Path

from stratagate_plugin.core.config import MemoryConfig
from stratagate_plugin.core.memory import StrataGate


async def test_derivation_pass_pauses_after_every_job(db_path: Path) -> None:
    memory = await StrataGate.open(db_path, MemoryConfig(block_turn_size=2))
    try:
        for i in range(4):
            await memory.blocks.append_turn(
                "ns", "t", user=f"Maya moved the kiln firing to Friday {i}", assistant="noted",
                receipt_id=f"t:{i}",
            )  # fmt: skip
        pauses = 0

        async def pause() -> None:
            nonlocal pauses
            pauses += 1

        report = await memory.derivation.process_pending(pause=pause)
        assert report.ran >= 2
        assert pauses == report.ran + report.graph_ran + report.topics.ran
    finally:
        await memory.close()
