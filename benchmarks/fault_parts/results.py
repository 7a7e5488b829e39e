"""One row per scenario and the one table they print as: counts a reader can check at a glance.

A count that does not apply to a scenario is ``None`` (printed ``-``), so a zero always means
"measured and found none". ``details`` keeps what the count alone cannot say: the first
failing inputs, stderr excerpts, where kills landed.
"""

from dataclasses import asdict, dataclass, field
from typing import Any

COLUMNS = (
    ("kill_points", "kills"),
    ("acknowledged", "acked"),
    ("lost", "lost"),
    ("integrity_errors", "integrity"),
    ("duplicates", "dups"),
    ("tracebacks", "tracebacks"),
    ("fuzz_cases", "fuzz"),
    ("crashes", "crashes"),
)
MUST_BE_ZERO = ("lost", "integrity_errors", "duplicates", "tracebacks", "crashes")
KEEP_EXAMPLES = 5


@dataclass
class Row:
    """What one scenario measured; counts left ``None`` do not apply to it."""

    scenario: str
    kill_points: int | None = None
    acknowledged: int | None = None
    lost: int | None = None
    integrity_errors: int | None = None
    duplicates: int | None = None
    tracebacks: int | None = None
    fuzz_cases: int | None = None
    crashes: int | None = None
    seconds: float = 0.0
    details: dict[str, Any] = field(default_factory=dict)

    def add(self, name: str, amount: int = 1) -> None:
        """Count ``amount`` more of column ``name`` (a column that was ``None`` starts at 0)."""
        setattr(self, name, (getattr(self, name) or 0) + amount)

    def example(self, kind: str, item: Any) -> None:
        """Keep the first few ``item`` of ``kind`` (failing inputs, stderr excerpts) only."""
        kept = self.details.setdefault(kind, [])
        if len(kept) < KEEP_EXAMPLES:
            kept.append(item)

    def failures(self) -> dict[str, int]:
        """The must-be-zero columns that are not."""
        return {name: value for name in MUST_BE_ZERO if (value := getattr(self, name))}

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


def table(rows: list[Row]) -> str:
    """The fault matrix as fixed-width text: one line per scenario, ``-`` where n/a."""
    width = max([len("scenario"), *(len(row.scenario) for row in rows)]) + 2
    header = "scenario".ljust(width) + "".join(f"{title:>11}" for _, title in COLUMNS)
    lines = [header + f"{'seconds':>9}", "-" * (len(header) + 9)]
    for row in rows:
        cells = "".join(f"{_cell(getattr(row, name)):>11}" for name, _ in COLUMNS)
        lines.append(row.scenario.ljust(width) + cells + f"{row.seconds:>9.1f}")
    return "\n".join(lines)


def _cell(value: int | None) -> str:
    return "-" if value is None else str(value)
