"""A purge's words (pure): what matches, what a plan shows, what a receipt keeps."""

import json
from pathlib import Path

import pytest

from stratagate_plugin.core.errors import InvalidInput
from stratagate_plugin.core.purge.words import TOMBSTONE, Needles, purge_hash
from stratagate_plugin.core.store import purge_files


def test_words_match_in_any_case_any_whitespace_and_as_json_escaped_them() -> None:
    needles = Needles(['my "pass"  word', "密码是猎户座"])
    assert needles.holds('MY "PASS"\nword') and needles.holds("x 密码是猎户座 y")
    escaped = json.dumps({"t": 'my "pass" word'})  # \" inside a JSON string
    assert needles.holds(escaped) and TOMBSTONE in needles.scrub(escaped)
    assert json.loads(needles.scrub(escaped)) == {"t": TOMBSTONE}
    ascii_json = json.dumps("密码是猎户座")  # \uXXXX escapes
    assert needles.holds(ascii_json)
    assert not needles.holds("my pass word") and not needles.holds(None)


def test_a_plan_excerpt_never_shows_the_words_and_the_hash_is_normalised() -> None:
    needles = Needles(["hunter2"])
    text = "so I typed HUNTER2 into the box, then hunter2 again"
    excerpt = needles.excerpt(text)
    assert "hunter2" not in excerpt.lower() and excerpt.count("[…]") == 2
    assert purge_hash("Hunter2 ") == purge_hash("hunter2") == needles.hashes()[0]
    assert purge_hash("hunter2").startswith("sha256:") and "hunter2" not in purge_hash("hunter2")


def test_words_too_short_are_refused_and_a_han_pair_is_enough() -> None:
    for short in ("ab", "  ", "a "):
        with pytest.raises(InvalidInput):
            Needles([short])
    assert Needles(["猎户"]).holds("猎户座")


def test_a_file_is_scanned_in_chunks_counting_a_match_across_two_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(purge_files, "CHUNK_BYTES", 16)
    monkeypatch.setattr(purge_files, "OVERLAP_BYTES", 12)
    path = tmp_path / "f.db"
    path.write_bytes(b"0123456789abSUA12345xyz" + b"." * 40 + b"sua12345" + b"-" * 7)
    assert purge_files.byte_hits(path, Needles(["SUA12345"])) == 2
    assert purge_files.byte_hits(tmp_path / "missing", Needles(["SUA12345"])) == 0


def test_a_one_token_word_is_also_looked_for_as_the_index_encodes_it() -> None:
    needles = Needles(["Hunter2", "my licence plate"])
    [term] = needles.index_terms  # the phrase is several tokens: no term of its own
    assert term == "t" + b"w:hunter2".hex()
    assert needles.byte_hits(f"x {term} y".encode()) == 1
