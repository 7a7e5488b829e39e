"""What a chapter holds, in words: its people and its recurring subjects (EN and ZH).

A chapter is named by what recurs across its events, weighed by how rare the word is in
the whole memory (a term in every other event — "important", 喜欢 — names nothing): the
main people (the first participant of at least a third of its events), then the subjects
with the highest ``events holding it × log(all events / events with it)``, a recurring
tag phrase ("mental health", 收养机构) preferred to its single words. The memory's own
vocabulary — event types, import categories, criticalities, ``agent-recorded``,
``category:fact`` — never names a chapter or a section.
"""

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..events.cards import EVENT_TYPES
from ..llm.offline.text import EN_STOPWORDS, HAN_FUNCTION, word_set
from ..text.search_terms import content_tokens
from .categories import CATEGORIES
from .frames import noun_votes
from .model import label_key

TITLE_SUBJECTS = 2
COMMON_WEIGHT = math.log(2)  # a word in over half of all events names nothing …
RARITY_EVENTS = 20  # … once the memory holds enough events to tell
TITLE_CHARS = 120
_MEMORY_WORDS = {
    *EVENT_TYPES,
    *CATEGORIES,
    *("instruction", "identity", "career", "project", "preference", "fact", "event"),
    *("routine", "safety", "agent-recorded", "agent", "memory", "note", "task", "other"),
    *("decisions", "preferences", "facts", "events", "notes", "projects", "tasks"),
}
_NAMESPACED = re.compile(r"^[a-z0-9_.-]+[:=][a-z0-9_.-]+$")  # category:fact, source=chatgpt
_HAN_FUNCTION = set(HAN_FUNCTION + "一")  # 一 as a numeral: 一些, 了一
_HAN_DISCOURSE = word_set(  # conjunctions, adverbs of degree and time: they name nothing
    """所以 因为 但是 而且 然后 已经 非常 真的 感觉 觉得 可能 一直 还是 就是
    如此 这么 那么 无论 如何 只是 其实 真是 总是 特别 有点 自己 我们 他们
    虽然 不过 然而 如果 即使 尽管 或者 还有 起来 下来 出来 别人 大家 人家
    时候 现在 以后 之前 最近 今天 昨天 明天 上周 下周 每天 一起"""
)
_INDEFINITE = word_set(
    """anyone someone everyone anybody somebody everybody anything something everything
    nothing nobody"""
)
_HAN_EDGE = HAN_FUNCTION + "一个张场段件位条次本些种只首部并会将要想能很太真最更又再样得总但"
# a direction verb before a word, a place or time suffix or 者/们 after one: a Han pair
# starting with the first or ending with the second straddles two words (出车祸, 聊天后)
_HAN_BEFORE, _HAN_AFTER = "去来出进回", "后时中里者们"
_HAN_UNJOINED = set(_HAN_EDGE + _HAN_BEFORE + _HAN_AFTER)
_HAN_ONLY = re.compile(r"[\u4e00-\u9fff]+")
_VERB_OR_ADVERB = re.compile(r"(?<!e)ed$|ly$")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9'+#-]*[A-Za-z0-9+#]|[\u4e00-\u9fff]+")


def is_internal_label(text: str) -> bool:
    """A tag of the memory's own (``agent-recorded``, ``category:fact``) or a bare event
    type / category (``preference``, ``project``): nothing a reader would call a subject."""
    key = label_key(text).replace("_", " ")
    return (
        not key
        or key in _MEMORY_WORDS
        or key.replace(" ", "_") in _MEMORY_WORDS
        or bool(_NAMESPACED.search(key))
    )


@dataclass(frozen=True)
class TermStats:
    """How many events of the whole memory hold each token (``counts``) of ``total``; an
    empty one (no search index) weighs every token alike."""

    counts: Mapping[str, int] = field(default_factory=dict)
    total: int = 0

    def salience(self, token: str, held: int, size: int) -> float:
        """How well the token names a chapter of ``size`` events, ``held`` of which hold
        it: ``held × (rarity + log(lift))``, the lift being how much more often the chapter
        holds it than the memory as a whole."""
        if not self.total:
            return float(held)
        everywhere = min(self.counts.get(token, held), self.total) or held
        lift = (held * self.total) / (size * everywhere)
        return held * (self.weight(token) + math.log(max(lift, 1.0)))

    def weight(self, token: str) -> float:
        """log(all events / events holding it): 0 for a word everywhere, high when rare."""
        if not self.total:
            return 1.0
        held = self.counts.get(token, 1)
        return math.log((self.total + 1) / (min(held, self.total) + 0.5))


def people_of(event: Mapping[str, Any]) -> list[str]:
    return [str(p) for p in event.get("participants", []) if str(p).strip()]


def main_person(event: Mapping[str, Any]) -> str | None:
    people = people_of(event)
    return people[0] if people else None


def main_people(events: Sequence[Mapping[str, Any]]) -> list[str]:
    """The first participants of at least a third of the events (two at most)."""
    counts = Counter(p for e in events if (p := main_person(e)))
    enough = max(1, math.ceil(len(events) / 3))
    return [person for person, n in counts.most_common(2) if n >= enough]


def subject_marks(event: Mapping[str, Any]) -> list[str]:
    """The event's tags and catalog hints that may name a subject (no memory tags, no
    participant's name)."""
    names = {label_key(p) for p in people_of(event)}
    marks = [*event.get("catalog_hints", []), *event.get("tags", [])]
    return [
        str(m) for m in marks if not is_internal_label(str(m)) and label_key(str(m)) not in names
    ]


def event_terms(event: Mapping[str, Any]) -> dict[str, str]:
    """Subject tokens of the event's title and marks → how each is written (people's names
    and the memory's own words left out)."""
    people = sorted(people_of(event), key=len, reverse=True)
    found: dict[str, str] = {}
    texts = [(str(event.get("title", "")), 3), *((mark, 1) for mark in subject_marks(event))]
    for text, shortest in texts:  # a tag's words were chosen: any length will do
        for person in people:  # 梅兰妮喜欢 must not give 妮喜
            text = text.replace(person, " ")
        for place, word in enumerate(_WORD.findall(text)):
            for token, surface in _word_tokens(word, shortest, first=place == 0):
                if not is_internal_label(surface):
                    found.setdefault(token, surface)
    return found


def _word_tokens(word: str, shortest: int, first: bool) -> list[tuple[str, str]]:
    """(token, surface) of one word: an English word (≥ ``shortest`` letters, its case
    kept for an acronym or a capitalised word past the first) or each Han pair of a run."""
    tokens = [t for t in content_tokens(word) if not t.startswith("h1:")]
    if not tokens:
        return []
    if tokens[0].startswith("w:"):
        bare = word.lower().strip("'")
        if len(word) < shortest or bare in EN_STOPWORDS or bare in _INDEFINITE:
            return []
        named = word[1:] != word[1:].lower() or (word[0].isupper() and not first)
        surface = word if named else word.lower()
        return [(tokens[0], surface.strip("'"))]
    return [(token, token[3:]) for token in tokens]


def subjects(
    events: Sequence[Mapping[str, Any]], stats: TermStats, limit: int = TITLE_SUBJECTS
) -> list[str]:
    """The chapter's recurring subjects, best first, as written (see the module doc)."""
    held: Counter[str] = Counter()
    surfaces: dict[str, Counter[str]] = {}
    phrases: Counter[str] = Counter()
    phrase_text: dict[str, str] = {}
    for event in events:
        terms = event_terms(event)
        held.update(terms.keys())
        for token, surface in terms.items():
            surfaces.setdefault(token, Counter())[surface] += 1
        for mark in dict.fromkeys(_phrase_marks(event)):
            phrases[label_key(mark)] += 1
            phrase_text.setdefault(label_key(mark), mark)
    least = 2 if len(events) >= 2 else 1
    han_tags = {m for e in events for m in subject_marks(e) if _HAN_ONLY.fullmatch(m)}
    texts = [f"{e.get('title', '')}. {e.get('summary', '')}" for e in events]
    named = [
        t
        for t, n in held.items()
        if n >= (2 if t.startswith("h2:") else least)  # a Han pair must recur to be a word
        and (stats.total < RARITY_EVENTS or stats.weight(t) >= COMMON_WEIGHT)
        and _names_a_thing(t, surfaces[t], han_tags)
        and (
            _is_named(surfaces[t])
            or _noun_like(surfaces[t].most_common(1)[0][0], texts)
            or _noun_like(_best_phrase(t, phrases, phrase_text, least) or "", texts)
        )
    ]
    scored = sorted(named, key=lambda t: (-stats.salience(t, held[t], len(events)), t))
    chosen: list[str] = []
    covered: set[str] = set()
    for token in scored:
        if token in covered:
            continue
        surface = surfaces[token].most_common(1)[0][0]
        phrase = _best_phrase(token, phrases, phrase_text, least)
        text = phrase or _joined_han(surface, held, texts)
        if _HAN_ONLY.fullmatch(text) and (
            not any(tag.endswith(text) for tag in han_tags) or _han_piece(text, texts)
        ):
            continue  # 美好 of 美好时光, 表达自 of 表达自己, 蹈工作室: no phrase's head
        covered.update(token for token in _tokens_of(text))
        key = label_key(text)
        if not any(key in label_key(c) or label_key(c) in key for c in chosen):
            chosen.append(text)
        if len(chosen) >= limit:
            break
    return chosen


def _names_a_thing(token: str, surfaces: Counter[str], tags: set[str]) -> bool:
    """Whether the word may name a subject: not a past form or an adverb written in lower
    case ("helped", "really"); a Han pair that starts or ends one of the chapter's Han
    tags (a tag is cut at function characters: 参加产品会议 gives 参加, 会议, not 加产),
    holds no function character (了一, 是我) and is no conjunction or time adverb. What
    it grows into must end a tag, the head of a Chinese phrase (``subjects``)."""
    surface = surfaces.most_common(1)[0][0]
    if token.startswith("h2:"):
        return (
            not set(surface) & _HAN_FUNCTION
            and surface[0] not in _HAN_EDGE + _HAN_BEFORE + _HAN_AFTER
            and surface[-1] not in _HAN_AFTER
            and surface not in _HAN_DISCOURSE
            and any(tag.startswith(surface) or tag.endswith(surface) for tag in tags)
        )
    if surface != surface.lower():
        return True
    return not (len(surface) > 4 and _VERB_OR_ADVERB.search(surface))


def _joined_han(surface: str, held: Counter[str], texts: Sequence[str]) -> str:
    """A Han pair joined with the pairs it runs on with in two texts at least (服装 + 装店 →
    服装店, 大自 + 自然 → 大自然), four characters at most."""
    if not _HAN_ONLY.fullmatch(surface) or set(surface) & _HAN_UNJOINED:
        return surface
    grown = True
    while grown and len(surface) < 4:
        grown = False
        for token in held:
            pair = token[3:]
            if not token.startswith("h2:") or set(pair) & _HAN_UNJOINED:
                continue
            after = surface + pair[1] if pair[0] == surface[-1] else None
            for longer in (after,):  # a Chinese word's head is its end: grow rightwards
                if longer and pair != surface and sum(longer in t for t in texts) >= 2:
                    surface, grown = longer, True
                    break
            if grown:
                break
    return surface


def _noun_like(surface: str, texts: Sequence[str]) -> bool:
    """Not voted down by its frames; a word in -ing (a gerund or a participle: camping,
    seeing) or a Han word (Chinese marks no part of speech: 支持, 记住, 美好) must be voted
    up at least once, and a Han word must not be a piece of a longer one. A recurring tag
    phrase holding the word may stand for it (一段美好时光)."""
    if not surface:
        return False
    votes = noun_votes(surface, texts)
    if _HAN_ONLY.fullmatch(surface):
        return votes >= 1 and not _han_piece(surface, texts, right=False)  # 陶艺 grows
    return votes >= 1 if surface.endswith("ing") and len(surface) > 5 else votes >= 0


def _han_piece(surface: str, texts: Sequence[str], right: bool = True) -> bool:
    """Whether a Han span is always met beside the same character, one that no function
    word is (装店 of 服装店, 舞蹈工 of 舞蹈工作室): its accessor variety is one, so it is a
    piece of a longer word, not a word; or always followed by 的, only ever a modifier
    (美好的回忆, 美好的一天), not what is talked about. ``right``: its right side too."""
    for side in (-1, len(surface)) if right else (-1,):
        neighbours = _neighbours(surface, texts, side)
        [only] = neighbours if len(neighbours) == 1 else [""]
        if only and _HAN_ONLY.fullmatch(only) and only not in _HAN_UNJOINED:
            return True
    return _neighbours(surface, texts, len(surface)) == {"的"}


def _neighbours(surface: str, texts: Sequence[str], side: int) -> set[str]:
    """The characters met at ``side`` of each occurrence (-1 before, its length after)."""
    found = set()
    for text in texts:
        at = text.find(surface)
        while at >= 0:
            spot = at + side
            found.add(text[spot] if 0 <= spot < len(text) else "")
            at = text.find(surface, at + 1)
    return found


def _is_named(surfaces: Counter[str]) -> bool:
    """Written capitalised past a sentence's start, or as an acronym: a name."""
    surface = surfaces.most_common(1)[0][0]
    return surface != surface.lower()


def _without_leading_discourse(mark: str) -> str:
    for word in _HAN_DISCOURSE:
        if mark.startswith(word):
            return mark[len(word) :]
    return mark


def _phrase_marks(event: Mapping[str, Any]) -> Iterable[str]:
    """Marks of several words, or a Han phrase of 2–6 characters once the function
    characters, measure words and adverbs at its edges are cut (张照片 → 照片)."""
    for mark in subject_marks(event):
        if _HAN_ONLY.fullmatch(mark):
            trimmed = _without_leading_discourse(mark)
            trimmed = trimmed.lstrip(_HAN_EDGE + _HAN_BEFORE).rstrip(_HAN_EDGE + _HAN_AFTER)
            if 2 <= len(trimmed) <= 6:
                yield trimmed
        elif len(mark.split()) >= 2:
            yield mark


def _best_phrase(
    token: str, phrases: Counter[str], texts: Mapping[str, str], least: int
) -> str | None:
    """The most held recurring phrase holding ``token``, if one recurs as often as needed."""
    holding = [k for k, n in phrases.items() if n >= max(least, 2) and token in _tokens_of(k)]
    if not holding:
        return None
    best = max(holding, key=lambda k: (phrases[k], -len(k), k))
    return texts[best]


def _tokens_of(text: str) -> set[str]:
    return {t for t in content_tokens(text) if not t.startswith("h1:")}


def chapter_title(events: Sequence[Mapping[str, Any]], stats: TermStats, zh: bool) -> str:
    """``Caroline: adoption, LGBTQ support group`` / ``卡罗琳：收养、支持小组``; the people
    alone, the subjects alone, else the first event's subject words."""
    people = main_people(events)
    found = subjects(events, stats)
    who = ("、" if zh else " & ").join(people)
    what = ("、" if zh else ", ").join(found)
    if who and what:
        title = f"{who}：{what}" if zh else f"{who}: {what}"
    else:
        title = who or what or _first_words(events)
    return title[:TITLE_CHARS].strip()


def _first_words(events: Sequence[Mapping[str, Any]]) -> str:
    """No recurring subject nor person: the first event's own subject words."""
    for event in events:
        marks = list(_phrase_marks(event))
        words = [w for w in event_terms(event).values() if not _HAN_ONLY.fullmatch(w)]
        if marks or words:
            return marks[0] if marks else " ".join(list(dict.fromkeys(words))[:4])
    return str(events[0].get("title", ""))[:60] if events else ""


def tokens_of(events: Iterable[Mapping[str, Any]]) -> list[str]:
    """Every subject token of the events (what ``TermStats`` must count for them)."""
    return list(dict.fromkeys(t for event in events for t in event_terms(event)))
