"""A fake clock for retry loops: sleeping records the delay and moves time on, instantly."""

from dataclasses import dataclass, field

from stratagate_plugin.core.llm.retry import RetryClock


@dataclass
class FakeTime:
    """Monotonic seconds that only pass when the code under test sleeps."""

    now: float = 0.0
    draw: float = 0.5
    sleeps: list[float] = field(default_factory=list)

    async def sleep(self, delay: float) -> None:
        self.sleeps.append(delay)
        self.now += delay

    def clock(self) -> RetryClock:
        return RetryClock(sleep=self.sleep, now=lambda: self.now, draw=lambda: self.draw)
