"""Latency summaries and peak memory shared by the search-scale benchmarks."""

import resource
import statistics
from pathlib import Path


def summary(values: list[float]) -> dict[str, float]:
    """p50 and p95 of millisecond samples (the nearest-rank p95 the tables always used)."""
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {"p50_ms": round(statistics.median(ordered), 2), "p95_ms": round(p95, 2)}


def peak_mb() -> float:
    """This process's peak resident set size so far, in MB: Linux's ``VmHWM``, which is
    this program's own. ``ru_maxrss`` is not: Linux carries it over ``exec``, so a child
    started by a large parent reports the parent's peak."""
    status = Path("/proc/self/status")
    if status.exists():
        for line in status.read_text().splitlines():
            if line.startswith("VmHWM:"):
                return round(int(line.split()[1]) / 1024, 1)
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
