"""``stratagate bench locomo``: evidence-recall measurement on a LoCoMo-format file."""

import argparse
from pathlib import Path
from typing import Any

from .common import database_location
from .progress import Progress


def register(commands: Any) -> None:
    bench = commands.add_parser("bench", help="run a benchmark")
    kinds = bench.add_subparsers(dest="benchmark", required=True)
    locomo = kinds.add_parser("locomo", help="LoCoMo evidence recall of retrieve()")
    locomo.add_argument("--data", type=Path, required=True, help="LoCoMo-format JSON file")
    locomo.add_argument("--out", type=Path, required=True, help="ranked dia_ids, JSON lines")
    locomo.add_argument("--k", type=int, default=20)
    locomo.add_argument("--model", choices=("offline", "http"), default="offline")
    locomo.add_argument(
        "--db",
        type=database_location,
        default=None,
        metavar="FILE_OR_URL",
        help="keep the database here: a file, or an empty postgresql:// database",
    )
    locomo.add_argument(
        "--captions",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="record a shared image's caption with its line as [image: caption] (default)",
    )
    locomo.set_defaults(handler=run_locomo_bench)


async def run_locomo_bench(args: argparse.Namespace) -> int:
    """A missing or malformed ``--data`` file is one line from ``load_samples``; progress
    counts the questions ranked (each conversation is recorded and derived first)."""
    from ..bench.locomo import run_locomo

    with Progress("bench locomo", "questions", 0) as progress:
        await run_locomo(
            args.data,
            args.out,
            k=args.k,
            db_path=args.db,
            model_kind=args.model,
            captions=args.captions,
            progress=progress.update,
        )
    return 0
