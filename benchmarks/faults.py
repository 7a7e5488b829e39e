"""The fault matrix (issue #13): kills, concurrent writers, a bad model server, fuzzing.

    python benchmarks/faults.py [--kills 50] [--seed 0] [--fuzz 10000] [--seconds 60]
                                [--cycles 1] [--workers 2] [--only kills,fuzz] [--json OUT]

Runs on this machine only (children of this process, a model server on 127.0.0.1, files in
a temporary folder) and prints one table, then the JSON (also written to ``--json OUT``):
one row per scenario, columns kill points, acknowledged turns, turns lost, integrity
errors, duplicates, tracebacks, fuzz cases, crashes ("-" where a column does not apply).
The aim is 0 in every column from "lost" on except fuzz cases; the scenarios and what each
column means for them are described in ``benchmarks/fault_parts/`` (kills, concurrent,
bad_model, fuzz). Exit status 1 when a must-be-zero column is not.
"""

import argparse
import json
import sys
import tempfile
from pathlib import Path

if __package__ in (None, ""):  # run as a script: the repository root holds the package
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.fault_parts.matrix import SCENARIOS, Options, run_matrix
from benchmarks.fault_parts.results import table


def options_from(argv: list[str] | None = None) -> tuple[Options, Path | None]:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--kills", type=int, default=50, help="SIGKILL points per target")
    parser.add_argument("--seed", type=int, default=0, help="kill points and fuzz inputs")
    parser.add_argument("--fuzz", type=int, default=10_000, help="fuzz cases in all")
    parser.add_argument("--seconds", type=float, default=60, help="concurrent writers' time")
    parser.add_argument("--cycles", type=int, default=1, help="passes over the bad replies")
    parser.add_argument("--workers", type=int, default=2, help="kill trials run at once")
    parser.add_argument("--ingest-turns", type=int, default=1000)
    parser.add_argument("--burst-turns", type=int, default=2000)
    parser.add_argument("--process-turns", type=int, default=200)
    parser.add_argument("--only", default=",".join(SCENARIOS), help="comma-separated scenarios")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    only = tuple(name.strip() for name in args.only.split(",") if name.strip())
    unknown = set(only) - set(SCENARIOS)
    if unknown:
        parser.error(f"unknown scenarios {sorted(unknown)}; choose from {', '.join(SCENARIOS)}")
    options = Options(
        kills=args.kills, seed=args.seed, fuzz=args.fuzz, seconds=args.seconds,
        cycles=args.cycles, workers=args.workers, ingest_turns=args.ingest_turns,
        burst_turns=args.burst_turns, process_turns=args.process_turns, only=only,
    )  # fmt: skip
    return options, args.json


def main(argv: list[str] | None = None) -> int:
    options, out = options_from(argv)
    with tempfile.TemporaryDirectory(prefix="stratagate-faults-") as folder:
        rows = run_matrix(options, Path(folder))
    print(table(rows))
    failing = {row.scenario: row.failures() for row in rows if row.failures()}
    print("all zero" if not failing else f"not zero: {json.dumps(failing)}")
    result = {"options": options.__dict__, "rows": [row.as_json() for row in rows]}
    print(json.dumps(result, ensure_ascii=False))
    if out:
        out.write_text(json.dumps(result, ensure_ascii=False, indent=2))
    return 1 if failing else 0


if __name__ == "__main__":
    raise SystemExit(main())
