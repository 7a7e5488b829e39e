"""Search rules: tokens, field weights, BM25, RRF and fuzzy matching (spec §6.1–6.3)."""

import math

import pytest

from stratagate_plugin.core.retrieval.bm25 import bm25_rank, fuzzy_match, rrf_rank, weighted_tokens
from stratagate_plugin.core.text.search_terms import fts_match_any, query_tokens, stem, tokenize


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Hello,  WORLD!", ["w:hello", "w:world"]),
        ("ＡＢＣ １２３", ["w:abc", "w:123"]),
        ("Painted paints painting", ["w:paint", "w:paint", "w:paint"]),
        ("我", ["h1:我"]),
        ("卡罗琳", ["h2:卡罗", "h2:罗琳", "h1:卡", "h1:罗", "h1:琳"]),
        ("LGBTQ支持 2023", ["w:lgbtq", "h2:支持", "h1:支", "h1:持", "w:2023"]),
        ("", []),
    ],
)
def test_tokenize_english_chinese_and_mixed(text: str, expected: list[str]) -> None:
    assert tokenize(text) == expected


@pytest.mark.parametrize(
    ("word", "expected"),
    [("studies", "study"), ("running", "run"), ("hiked", "hik"), ("hike", "hik"), ("is", "is")],
)
def test_stem_strips_common_suffixes(word: str, expected: str) -> None:
    assert stem(word) == expected


@pytest.mark.parametrize(
    ("left", "right"),
    [
        ("we went hiking", "go hike"),
        ("she bought it", "buying"),
        ("the kids", "children"),
        ("my mom", "mother"),
        ("three times", "3"),
        ("that pic", "photos"),
    ],
)
def test_tokenize_joins_irregular_forms_and_a_few_synonyms(left: str, right: str) -> None:
    assert set(tokenize(right)) <= set(tokenize(left))


def test_tokenize_adds_a_hyphenated_word_joined() -> None:
    assert tokenize("I de-stress") == ["w:i", "w:de", "w:stress", "w:destress"]
    assert tokenize("destress") == ["w:destress"]


def test_query_tokens_drop_function_words_unless_nothing_is_left() -> None:
    assert query_tokens("When did Caroline go to the group?") == ["w:carolin", "w:go", "w:group"]
    assert query_tokens("what is it") == ["w:what", "w:is", "w:it"]
    assert query_tokens("What kind of cake did she say?") == ["w:cak"]
    assert "h2:什么" not in query_tokens("她画了什么")


@pytest.mark.parametrize(
    ("word", "function_word"), [("note", "not"), ("themes", "them"), ("outing", "out")]
)
def test_a_word_never_stems_into_a_function_word(word: str, function_word: str) -> None:
    assert stem(word) != stem(function_word)
    assert stem(word) == stem(word.removesuffix("s"))  # its plural still meets it
    assert query_tokens(f"the {word} of it") == [f"w:{stem(word)}"]


def test_query_tokens_drop_inflected_question_frame_words() -> None:
    assert query_tokens("What types of cakes has she mentioned?") == ["w:cak"]


def test_fts_match_any_dedupes_encoded_tokens() -> None:
    assert fts_match_any(["w:a", "w:a", "h1:我"]) == "t773a61 OR t68313ae68891"


def test_weighted_tokens_repeat_floor_of_weight_at_least_once() -> None:
    assert weighted_tokens([("cat", 2.7), ("dog", 0.2)]) == ["w:cat", "w:cat", "w:dog"]


def _bm25(
    tf: int, dl: int, avgdl: float, n: int, df: int, k1: float = 1.2, b: float = 0.75
) -> float:
    idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
    return idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl))


def test_bm25_rank_matches_the_formula() -> None:
    docs = {"a": ["x", "y"], "b": ["x", "x", "x", "z"], "c": ["z"]}
    avgdl = 7 / 3
    expected_a = _bm25(1, 2, avgdl, 3, 2) + _bm25(1, 2, avgdl, 3, 1)
    expected_b = _bm25(3, 4, avgdl, 3, 2)
    ranked = bm25_rank(["x", "y", "x"], docs)
    assert [doc for doc, _ in ranked] == ["a", "b"]
    assert ranked[0][1] == pytest.approx(expected_a)
    assert ranked[1][1] == pytest.approx(expected_b)


def test_bm25_rank_ties_by_id_and_keeps_only_positive_scores() -> None:
    docs = {"d2": ["x"], "d1": ["x"], "d3": ["y"]}
    assert [doc for doc, _ in bm25_rank(["x"], docs)] == ["d1", "d2"]


@pytest.mark.parametrize(
    ("query", "docs"),
    [([], {"a": ["x"]}), (["x"], {}), (["q"], {"a": ["x"], "b": ["y"]})],
)
def test_bm25_rank_empty_or_unmatched_gives_nothing(
    query: list[str], docs: dict[str, list[str]]
) -> None:
    assert bm25_rank(query, docs) == []


def test_rrf_rank_matches_the_formula() -> None:
    ranked = rrf_rank([(["a", "b"], 1.0), (["b", "c"], 2.0), (["c", "a"], 0.0)])
    expected = {"a": 1 / 61, "b": 1 / 62 + 2 / 61, "c": 2 / 62}
    assert [item for item, _ in ranked] == ["b", "c", "a"]
    assert dict(ranked) == pytest.approx(expected)


def test_rrf_rank_ties_by_best_rank_then_id() -> None:
    ranked = rrf_rank([(["y", "x"], 1.0), (["x", "y"], 1.0), (["b", "a"], 1.0), (["a", "b"], 1.0)])
    assert [item for item, _ in ranked] == ["a", "b", "x", "y"]
    assert rrf_rank([(["b"], 1.0), (["z", "a"], 1.0), (["a", "z"], 1.0)])[0][0] == "a"


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ("Caroline", "caroline", True),
        ("Caro", "  CAROLINE ", True),
        ("Caroline Smith", "smith", True),
        ("Mel", "Caroline", False),
        ("", "Caroline", False),
    ],
)
def test_fuzzy_match_equality_or_substring(a: str, b: str, expected: bool) -> None:
    assert fuzzy_match(a, b) is expected


def test_done_is_a_query_function_word_not_the_stem_of_dont() -> None:
    assert query_tokens("What martial arts has John done?") == ["w:martial", "w:art", "w:john"]
    assert "w:don" in tokenize("I don't know")  # what "done" would have matched
