"""Latency summaries and peak memory shared by the search-scale benchmarks."""

import resource
import statistics


def summary(values: list[float]) -> dict[str, float]:
    """p50 and p95 of millisecond samples (the nearest-rank p95 the tables always used)."""
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {"p50_ms": round(statistics.median(ordered), 2), "p95_ms": round(p95, 2)}


def peak_mb() -> float:
    """This process's peak resident set size so far, in MB."""
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
