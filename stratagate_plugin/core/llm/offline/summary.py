"""Offline block summary (spec §2.1): L0 title + tags, L1 central sentences, L2 key facts.

Terms are weighted TF-IDF-style inside the block (term frequency × log(1 + sentences /
sentences containing it), stop words removed); phrases are runs of content words (RAKE);
a sentence's centrality is the weight of its distinct terms over the square root of its
length. Key facts add bonuses for numbers, dates, names and event cues.
"""

import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from datetime import tzinfo
from typing import Any

from ...clock import parse_iso
from ...text.temporal.resolve import TimeExpression, find_time_expressions
from ..tasks import BlockSummary
from .events import event_type_of, message_sentences
from .text import (
    Sentence,
    clip,
    content_terms,
    is_question,
    phrases,
    proper_names,
    surface_forms,
    without_times,
)
from .titles import attributed

_HAN = re.compile(r"[\u4e00-\u9fff]")
_DIGIT = re.compile(r"\d")


def summarize_block(messages: Sequence[Mapping[str, Any]], zone: tzinfo) -> BlockSummary:
    """The L0–L2 layers of one block and the extraction pre-screen."""
    sentences = [s for s in message_sentences(messages) if content_terms(s.text)]
    if not sentences:
        return BlockSummary(
            title="Short exchange", summary="No substantive content.", should_extract=False
        )
    weights = term_weights(sentences)
    phrases = ranked_phrases(sentences, weights)
    facts = [s for s in sentences if not is_question(s.text)] or sentences
    return BlockSummary(
        title=_title(phrases) or clip(sentences[0].text, 120),
        tags=_tags(phrases, weights),
        summary=_narrative(facts, weights),
        keypoints=_keypoints(facts, weights, zone),
        should_extract=any(event_type_of(s, timed=_dated(s)) for s in sentences),
    )


def _dated(sentence: Sentence) -> bool:
    """The pre-screen admits what extraction would: a sentence's own time counts as a term
    ("The launch is on April 20th")."""
    return sentence.text != without_times(sentence.text)


def term_weights(sentences: Sequence[Sentence]) -> dict[str, float]:
    """TF × log(1 + N/DF) over the block's sentences; names weigh 1.5×."""
    frequency: Counter[str] = Counter()
    spread: Counter[str] = Counter()
    names = {name.lower() for s in sentences for name in proper_names(s.text)}
    for sentence in sentences:
        terms = content_terms(without_times(sentence.text))
        frequency.update(terms)
        spread.update(set(terms))
    total = len(sentences)
    return {
        term: count * math.log(1 + total / spread[term]) * (1.5 if term in names else 1.0)
        for term, count in frequency.items()
    }


def ranked_phrases(sentences: Sequence[Sentence], weights: Mapping[str, float]) -> list[str]:
    """Candidate phrases (runs of up to three content words) by summed term weight."""
    scores: dict[str, float] = {}
    for sentence in sentences:
        forms = surface_forms(sentence.text)
        for phrase in phrases(without_times(sentence.text)):
            score = sum(weights.get(term, 0.0) for term in content_terms(phrase))
            shown = " ".join(forms.get(word.lower(), word) for word in phrase.split())
            scores[shown] = max(scores.get(shown, 0.0), score)
    return sorted(scores, key=lambda phrase: (-scores[phrase], phrase))


def _title(phrases: Sequence[str]) -> str:
    chosen: list[str] = []
    for phrase in phrases:
        if not any(_overlaps(phrase, taken) for taken in chosen):
            chosen.append(phrase)
        if len(chosen) == 3:
            break
    joiner = "、" if chosen and all(_HAN.search(p) for p in chosen) else ", "
    title = joiner.join(chosen)
    return clip(title[:1].upper() + title[1:], 120)


def _overlaps(first: str, second: str) -> bool:
    return bool(set(content_terms(first)) & set(content_terms(second)))


def _tags(phrases: Sequence[str], weights: Mapping[str, float]) -> list[str]:
    """2–5 tags: the best single terms, then short phrases, never overlapping."""
    singles = sorted(weights, key=lambda term: (-weights[term], term))
    tags: list[str] = []
    for candidate in [*phrases[:3], *singles]:
        if len(tags) == 5:
            break
        if len(candidate.split()) <= 2 and not any(_overlaps(candidate, t) for t in tags):
            tags.append(candidate.lower() if candidate.isalpha() else candidate)
    return tags


def centrality(sentence: Sentence, weights: Mapping[str, float]) -> float:
    """Summed weights of the distinct terms, in text order (a set's order varies by process)."""
    terms = list(dict.fromkeys(content_terms(sentence.text)))
    return sum(weights.get(term, 0.0) for term in terms) / math.sqrt(len(terms) + 1)


def _narrative(sentences: Sequence[Sentence], weights: Mapping[str, float]) -> str:
    count = 1 if len(sentences) <= 3 else 2 if len(sentences) <= 8 else 3
    best = sorted(sentences, key=lambda s: -centrality(s, weights))[:count]
    ordered = [s for s in sentences if s in best]
    return clip(" ".join(_labelled(s) for s in ordered), 2000)


def _keypoints(
    sentences: Sequence[Sentence], weights: Mapping[str, float], zone: tzinfo
) -> list[str]:
    """3–8 atomic facts: sentences carrying names, numbers, dates, decisions, preferences."""
    scored = {id(s): _fact_score(s, weights, zone) for s in sentences}
    best = sorted(sentences, key=lambda s: -scored[id(s)])
    chosen = [s for s in best if scored[id(s)] >= 1.0][:8]
    if len(chosen) < 3:
        chosen += [s for s in best if s not in chosen][: 3 - len(chosen)]
    return [_labelled(s, zone) for s in sentences if s in chosen]


def _fact_score(sentence: Sentence, weights: Mapping[str, float], zone: tzinfo) -> float:
    text = sentence.text  # a block of only time words has no weights ("Friday is my day off.")
    score = centrality(sentence, weights) / (max(weights.values(), default=0.0) or 1.0)
    score += 1.0 if _DIGIT.search(text) else 0.0
    score += 1.0 if proper_names(text) else 0.0
    score += 1.5 if event_type_of(sentence) else 0.0
    score += 1.5 if _times(sentence, zone) else 0.0
    return score


def _times(sentence: Sentence, zone: tzinfo) -> list[TimeExpression]:
    if not sentence.created_at:
        return []
    return find_time_expressions(sentence.text, parse_iso(sentence.created_at).astimezone(zone))


def _time_of(sentence: Sentence, zone: tzinfo) -> str:
    """`` [yesterday = 2023-05-07]`` for the first relative expression, else empty."""
    relative = [e for e in _times(sentence, zone) if e.basis != "explicit"]
    return f" [{relative[0].original_text} = {relative[0].describe()}]" if relative else ""


def _labelled(sentence: Sentence, zone: tzinfo | None = None) -> str:
    note = _time_of(sentence, zone) if zone is not None else ""
    return clip(attributed(sentence, note), 400)
