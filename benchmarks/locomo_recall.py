"""LoCoMo evidence recall of the raw retrieval channel and a plain BM25 baseline.

    .venv/bin/python benchmarks/locomo_recall.py \
        --data ../shared/locomo/locomo-dev.json --out /tmp/locomo-ranked.jsonl --k 20

Needs ``rank_bm25`` (``.venv/bin/pip install rank_bm25``) for the baseline.
"""

import argparse
import asyncio

from stratagate_plugin.bench.locomo import run_locomo


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True, help="LoCoMo-format JSON file")
    parser.add_argument("--out", required=True, help="JSONL of ranked dia_ids per question")
    parser.add_argument("--k", type=int, default=20, help="how many ids to keep per question")
    parser.add_argument("--db", default=None, help="database file to build (default: temporary)")
    args = parser.parse_args()
    asyncio.run(run_locomo(args.data, args.out, k=args.k, db_path=args.db))


if __name__ == "__main__":
    main()
