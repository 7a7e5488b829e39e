"""Each side of the search-scale comparison in a fresh process of its own, for memory.

A process's peak RSS only grows, and the corpus is built (or bm25s imported) in the
benchmark's own process, so a peak read there mixes the sides. Here each side runs as
``python -m benchmarks.scale_apart ours|bm25s`` with only its own imports:

- ``ours``: the engine opens the corpus and answers every operation (``measure_ours``);
- ``bm25s``: the texts bm25s needs are read from the corpus, its two indexes built, and
  the same questions asked (``scale_bm25s``); its peak is also taken after the texts are
  read, so the indexes' own share is reported too.

Each prints one JSON object on stdout: its results and ``peak_rss_mb``.
"""

import asyncio
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.scale_stats import peak_mb

ROOT = Path(__file__).resolve().parent.parent


def run_side(side: str, path: Path | str, asked: dict[str, Sequence[str]]) -> dict[str, Any]:
    """``side`` run in a child process on ``path`` with the question sets ``asked``."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
        json.dump(asked, handle)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    try:
        done = subprocess.run(
            [sys.executable, "-m", "benchmarks.scale_apart", side, str(path), handle.name],
            check=True, capture_output=True, text=True, env=env, cwd=ROOT,
        )  # fmt: skip
    except subprocess.CalledProcessError as failed:
        raise SystemExit(f"scale_apart {side} failed:\n{failed.stderr}") from failed
    finally:
        os.unlink(handle.name)
    return json.loads(done.stdout)


def ours(path: str, asked: dict[str, Sequence[str]]) -> dict[str, Any]:
    from benchmarks.scale_measure import measure_ours

    target: Path | str = path if path.startswith("postgresql://") else Path(path)
    samples, auto_queries = asyncio.run(measure_ours(target, asked["queries"], asked["only"]))
    return {"samples": samples, "auto_queries": auto_queries, "peak_rss_mb": peak_mb()}


def theirs(path: str, asked: dict[str, Sequence[str]]) -> dict[str, Any]:
    from benchmarks.scale_bm25s import baselines
    from benchmarks.scale_corpus import corpus_texts

    event_texts, message_texts = corpus_texts(Path(path))
    texts_mb = peak_mb()
    rows, built = baselines(event_texts, message_texts, asked)
    return {"rows": rows, "built": built, "peak_rss_mb": peak_mb(), "texts_peak_mb": texts_mb}


def main(argv: list[str]) -> None:
    side, path, asked_file = argv
    asked = json.loads(Path(asked_file).read_text())
    result = ours(path, asked) if side == "ours" else theirs(path, asked)
    print(json.dumps(result))


if __name__ == "__main__":
    main(sys.argv[1:])
