"""Issue #29's "Done means", checked against what a run measured: one line per criterion.

``search_scale.py`` prints it after the main table and after the concurrency run, and
``web_pages.py`` after each worker setting; each JSON carries it as ``verdict``. A line
holds when its measure is at most its limit. The concurrency run is judged two ways: over
all calls (the issue's wording) and per call kind, since an agent waits on each call and
the slowest kind can miss the limit while the mix meets it.
"""

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

AGENT_CALLS = (
    "search_raw_ranked",
    "search_events",
    "search_graph",
    "list_topics",
    "build_auto_context",
)
"""The calls the issue names for p95 ≤ 50 ms (the ranked raw search is the agent's raw tool)."""
CALL_P95_MS = 50.0
BM25S_RATIO = 2.0
RSS_RATIO = 0.5
CLIENTS_P95_MS = 150.0
PAGE_P95_MS = 100.0


@dataclass(frozen=True)
class Check:
    """One criterion on one measure: ``holds`` when ``measured`` ≤ ``limit``."""

    criterion: str
    subject: str
    measured: float
    limit: float

    @property
    def holds(self) -> bool:
        return self.measured <= self.limit


def main_checks(result: Mapping[str, Any]) -> list[Check]:
    """p95 of each agent-facing call, p50 against bm25s where it ran, and peak memory."""
    latency = result["latency"]
    checks = [
        Check("p95 ms", name, latency[name]["p95_ms"], CALL_P95_MS)
        for name in AGENT_CALLS
        if name in latency
    ]
    checks += [
        Check("p50 × bm25s", name, row["p50_ratio_vs_bm25s"], BM25S_RATIO)
        for name, row in latency.items()
        if "p50_ratio_vs_bm25s" in row
    ]
    if "peak_rss_ratio_vs_bm25s" in result:
        ratio = result["peak_rss_ratio_vs_bm25s"]
        checks.append(Check("peak RSS × bm25s", "the run", ratio, RSS_RATIO))
    return checks


def concurrency_checks(runs: Iterable[Mapping[str, Any]]) -> list[Check]:
    """Per path (MCP, HTTP): p95 over all calls, then each call kind's and the writer's."""
    checks = []
    for run in runs:
        through = run["through"]
        checks.append(Check("p95 ms, all calls", through, run["all"]["p95_ms"], CLIENTS_P95_MS))
        for kind, row in sorted(run["kinds"].items()):
            checks.append(
                Check("p95 ms, one kind", f"{through} {kind}", row["p95_ms"], CLIENTS_P95_MS)
            )
        if run.get("writer", {}).get("turns"):
            writer = run["writer"]["p95_ms"]
            checks.append(Check("p95 ms, one kind", f"{through} writer", writer, CLIENTS_P95_MS))
    return checks


def page_checks(results: Mapping[str, Any], worker: str) -> list[Check]:
    """Every page's p95 (``web_pages.py``'s rows; the ``_worker`` summary is not a page)."""
    return [
        Check(f"p95 ms, worker {worker}", name, row["p95_ms"], PAGE_P95_MS)
        for name, row in results.items()
        if name != "_worker" and "p95_ms" in row
    ]


def print_verdict(checks: Sequence[Check]) -> None:
    """The lines, then how many hold."""
    print(f"{'criterion':<24}{'subject':<28}{'measured':>10}{'limit':>8}  holds")
    for check in checks:
        mark = "yes" if check.holds else "NO"
        print(
            f"{check.criterion:<24}{check.subject:<28}{check.measured:>10.2f}"
            f"{check.limit:>8.1f}  {mark}"
        )
    held = sum(check.holds for check in checks)
    print(f"{held} of {len(checks)} hold")


def as_json(checks: Sequence[Check]) -> list[dict[str, Any]]:
    return [asdict(check) | {"holds": check.holds} for check in checks]
