"""The scale benchmarks' verdict: issue #29's criteria read off a run's JSON."""

from benchmarks.scale_verdict import (
    AGENT_CALLS,
    as_json,
    concurrency_checks,
    main_checks,
    page_checks,
)


def _row(p50: float, p95: float, ratio: float | None = None) -> dict[str, float]:
    row = {"p50_ms": p50, "p95_ms": p95}
    return row | ({"p50_ratio_vs_bm25s": ratio} if ratio is not None else {})


def test_the_main_table_is_judged_per_call_per_ratio_and_on_memory() -> None:
    result = {
        "latency": {
            "search_events": _row(3.5, 5.0, 7.5),
            "search_raw": _row(3.6, 60.0, 1.7),  # not agent-facing: its p95 is not judged
            "search_raw_ranked": _row(12.0, 51.0, 6.4),
            "build_auto_context": _row(13.0, 17.0, 30.0),
            "search_graph": _row(2.7, 50.0),
            "list_topics": _row(3.7, 5.0),
            "memory_directory": _row(0.7, 1.0),
        },
        "peak_rss_ratio_vs_bm25s": 0.21,
    }
    verdict = {(c["criterion"], c["subject"]): c["holds"] for c in as_json(main_checks(result))}
    assert verdict == {
        ("p95 ms", "search_raw_ranked"): False,
        ("p95 ms", "search_events"): True,
        ("p95 ms", "search_graph"): True,  # at the limit holds
        ("p95 ms", "list_topics"): True,
        ("p95 ms", "build_auto_context"): True,
        ("p50 × bm25s", "search_events"): False,
        ("p50 × bm25s", "search_raw"): True,
        ("p50 × bm25s", "search_raw_ranked"): False,
        ("p50 × bm25s", "build_auto_context"): False,
        ("peak RSS × bm25s", "the run"): True,
    }
    assert set(AGENT_CALLS) <= set(result["latency"])


def test_a_focused_run_judges_only_what_it_measured() -> None:
    checks = main_checks({"latency": {"search_graph": _row(2.0, 4.0)}})
    assert [(c.criterion, c.subject, c.holds) for c in checks] == [("p95 ms", "search_graph", True)]


def test_many_clients_are_judged_over_all_calls_and_per_kind() -> None:
    run = {
        "through": "mcp",
        "all": {"p50_ms": 18.0, "p95_ms": 121.0},
        "kinds": {"search_raw": _row(90.0, 196.0), "search_events": _row(26.0, 82.0)},
        "writer": {"turns": 18, "p50_ms": 11.0, "p95_ms": 51.0},
    }
    idle_writer = {**run, "through": "http", "writer": {"turns": 0}}
    checks = [(c.subject, c.holds) for c in concurrency_checks([run, idle_writer])]
    assert checks == [
        ("mcp", True),
        ("mcp search_events", True),
        ("mcp search_raw", False),
        ("mcp writer", True),
        ("http", True),
        ("http search_events", True),
        ("http search_raw", False),
    ]


def test_every_page_is_judged_and_the_worker_summary_is_not_a_page() -> None:
    results = {
        "_worker": {"worker": "running", "jobs_finished": 437},
        "events": _row(10.0, 20.5),
        "topics query": _row(40.0, 100.5),
        "jobs": {"status": 500, "url": "/memory/jobs"},  # a page that failed: no timing
    }
    checks = page_checks(results, "running")
    assert [(c.criterion, c.subject, c.holds) for c in checks] == [
        ("p95 ms, worker running", "events", True),
        ("p95 ms, worker running", "topics query", False),
    ]
