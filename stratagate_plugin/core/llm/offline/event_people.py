"""Who and where an offline event card names (spec §3.3, issue 26): its participants are
people (speakers, names in the sentence, "王先生"), never places, dates nor the things a
statement marks as not people (the tool after "use", the pet after "my dog"); its tags are
places first, then content phrases. Split from ``events``, which decides whether a sentence
is an event at all and when it happened."""

import re

from .lexicon import HONORIFIC_NAME, PLACE_CUE
from .roles import HAN_TITLES
from .statements import han_people, non_people, statement_kind
from .text import HAN_FUNCTION, Sentence, is_person_name, phrases, proper_names, without_times
from .titles import bare

# A sentence-initial name followed by its verb or an apposition: "Jon owns", "Kenji, my …",
# not a modifier ("Apple pie is …") nor an adverb ("Yesterday my brother …").
_LEADING_NAME = re.compile(
    r"^(?P<name>[A-Z][a-z]+)(?:'s)?(?:,|\s+(?:is|was|has|had|and|[a-z]+(?<!s)s)\b)"
)
_HAN_VERBS = "做当找见跟叫问让请"


def participants_of(sentence: Sentence, speakers: set[str]) -> list[str]:
    """People and organisations: speakers, names in the text; places and dates left out."""
    names = [sentence.speaker] if sentence.speaker else []
    names += [name for name in sorted(speakers) if name in sentence.text]
    found = proper_names(sentence.text) + _subject_name(sentence.text)
    found += [n for n in HONORIFIC_NAME.findall(sentence.text) if _honorific(n)]
    things = non_people(sentence.text)
    names += [
        name
        for name in found
        if name in speakers or not (_is_place(sentence.text, name) or name in things)
    ]
    names += han_people(bare(sentence.text))
    return [name for name in dict.fromkeys(names) if name in speakers or is_person_name(name)]


def _honorific(name: str) -> bool:
    """ "王先生", "欧阳老师": a surname of one or two characters before the title, not a job
    ("做产品经理")."""
    title = next(t for t in HAN_TITLES if name.endswith(t))
    return len(name) - len(title) <= 2 and name[0] not in HAN_FUNCTION + _HAN_VERBS


def _subject_name(text: str) -> list[str]:
    """A sentence-initial name a statement frame reads as its person ("Priya is my manager",
    "Jon owns a bakery"), which ``proper_names`` leaves out as a capitalised first word."""
    said = bare(text)
    first = _LEADING_NAME.match(said)
    if first is None or statement_kind(said) is None or not is_person_name(first["name"]):
        return []
    return [first["name"]]


def places(text: str) -> list[str]:
    """Capitalised names after "in", "at", "to", "from", "visited" …: places, not people."""
    return [name for name in proper_names(text) if _is_place(text, name)]


def _is_place(text: str, name: str) -> bool:
    position = text.find(name)
    return position > 0 and PLACE_CUE.search(text[:position]) is not None


def card_tags(text: str, speakers: set[str]) -> list[str]:
    """Places first, then content phrases; time expressions and speaker names left out."""
    found = [p for p in places(text) if p not in speakers] + phrases(without_times(text))
    return list(dict.fromkeys(found))[:5]
