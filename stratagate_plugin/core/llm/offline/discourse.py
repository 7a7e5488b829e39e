"""Who a sentence is about across sentences and events (issue 26): subject tracking for
the offline graph projector, English and Chinese.

- A third-person pronoun ("she", "he", 他, 她) refers to the person named last before it,
  in its own sentence or in the last few events of the projection (``Focus``), never to a
  speaker: "I met Priyanka at Oxford. She's been my flatmate since." is about Priyanka.
- A relation named without a name waits for one ("I have a daughter. Her name is Mira.",
  我跟老公是在大学认识的，他叫李响): ``Focus.pending``.
- Kinship and roles said with a copula or a naming verb rather than "my sister Ana":
  "Jonas is my boss", "my cousin is called Beatriz", "Lena and I have been friends",
  "Aunt Mei", "the guy I'm dating, Omar", 赵强是我的同事, 我表姐叫刘芳, 陈静，我的同事,
  小王和我是大学室友, 他现在是我的跑步教练.

The frames are grammatical (copula, naming verb, apposition, coordination with "I"); the
only word lists are the closed kinship and role nouns of ``roles.ROLES``.
"""

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from .han_names import han_person
from .roles import EN_ROLES, HAN_RUN, PERSON_NAME, ROLES, THIRD, ZH_ROLES
from .text import is_latin

FOCUS_EVENTS = 3  # a pronoun reaches back this many events of the projection

_PLURALS = {"friends": "friend", "roommates": "roommate", "flatmates": "roommate",
            "housemates": "roommate", "colleagues": "colleague", "coworkers": "colleague",
            "neighbours": "neighbour", "neighbors": "neighbour", "cousins": "cousin"}  # fmt: skip
_ZH_ROLE = rf"(?:{ZH_ROLES})(?![的之])"  # 我姐的同学 is not my sister
_ADJ = (
    r"(?:(?:older|younger|little|big|elder|baby|twin|best|oldest|youngest|new|eldest|old|dear"
    r"|closest|good)\s+)?"
)
_HAN = r"[\u4e00-\u9fff·]{2,5}"
_HE = r"(?:[Ss]he|[Hh]e)"
_MY = r"(?:[Mm]y|[Oo]ur)"

# (pattern, whose the role is): group x the person (absent: the pronoun's person)
_NAMED_ROLES = (
    re.compile(rf"\b(?P<x>{PERSON_NAME})(?:'s|\s+is|\s+was|\s+has\s+been|'s\s+been)\s+(?:also\s+|still\s+)?"
               rf"{_MY}\s+{_ADJ}(?P<role>{EN_ROLES})\b(?!['’]s)"),
    re.compile(rf"\b{_MY}\s+{_ADJ}(?P<role>{EN_ROLES})(?:'s\s+name\s+is|\s+is\s+(?:called|named))"
               rf"\s+(?P<x>{PERSON_NAME})\b"),
    re.compile(rf"\b(?P<x>{PERSON_NAME})\s+and\s+I\s+(?:have\s+been|'ve\s+been|are|were|became)\s+"
               rf"(?:best\s+|good\s+|close\s+|old\s+)?(?P<role>{'|'.join(_PLURALS)})\b"),
    # "a friend of mine, Priya" / "Tom, an old friend from college" / "Rosa has been mentoring me"
    re.compile(rf"\b(?:[Aa]|[Aa]n)\s+{_ADJ}(?P<role>{EN_ROLES})\s+of\s+(?:mine|ours)\s*,?\s+(?P<x>{PERSON_NAME})\b"),
    re.compile(rf"\b(?P<x>{PERSON_NAME}),\s+(?:a|an)\s+{_ADJ}(?P<role>{EN_ROLES})\s+(?:of\s+(?:mine|ours)|from)\b"),
    # "Ines, the friend I told you about": the role a clause of the speaker's gives her
    re.compile(rf"\b(?P<x>{PERSON_NAME}),\s+the\s+{_ADJ}(?P<role>{EN_ROLES})\s+(?:I|I've|I'd|we)\s"),
    re.compile(rf"\b(?P<x>{PERSON_NAME})\s+(?:has\s+been\s+|had\s+been\s+|is\s+|was\s+)?(?P<role>mentor|coach)"
               rf"(?:ing|ed|es|s)\s+(?:me|us)\b"),
    re.compile(r"\b(?P<role>Aunt|Auntie|Uncle|Grandma|Grandpa|Cousin|Granny)\s+"
               r"(?P<x>[A-ZÀ-Þ][a-zß-ÿ]+)\b"),
    re.compile(rf"\b(?:guy|girl|man|woman|person|one)\s+I'?m\s+(?:dating|seeing)\s*,\s*(?P<x>{PERSON_NAME})\b"),
    re.compile(rf"\bI'?m\s+(?:dating|seeing|engaged\s+to|married\s+to)\s+(?P<x>{PERSON_NAME})\b"),
    re.compile(rf"(?P<tail>{HAN_RUN})是我(?:们)?的?(?:[\u4e00-\u9fff]{{0,3}}?)(?P<role>{_ZH_ROLE})"),
    re.compile(rf"我(?:们)?的?(?:[\u4e00-\u9fff]{{0,3}}?)(?P<role>{ZH_ROLES})(?:叫|名叫|是)(?P<x>{_HAN})"),
    re.compile(rf"(?P<tail>{HAN_RUN})[，,]\s*我的(?P<role>{ZH_ROLES})"),
    re.compile(rf"(?P<tail>{HAN_RUN})(?:和|跟)我是(?:[\u4e00-\u9fff]{{0,3}}?)(?P<role>{_ZH_ROLE})"),
    re.compile(rf"我(?:和|跟)(?P<x>{_HAN})是(?:[\u4e00-\u9fff]{{0,3}}?)(?P<role>{_ZH_ROLE})"),
)  # fmt: skip
_PRONOUN_ROLES = (
    re.compile(rf"\b{_HE}(?:'s|\s+is|\s+was|\s+has\s+been|'s\s+been|\s+became)\s+(?:\w+\s+)?"
               rf"{_MY}\s+{_ADJ}(?P<role>{EN_ROLES})\b(?!['’]s)"),
    re.compile(rf"[他她](?:现在|后来|也|就)?(?:成了|是|成为了?)我(?:们)?的?(?:[\u4e00-\u9fff]{{0,3}}?)"
               rf"(?P<role>{ZH_ROLES})"),
)  # fmt: skip
_ROLE_ALONE = (  # a relation named without a name: its name may follow
    re.compile(
        rf"\bI\s+(?:have|'ve\s+got|have\s+got|got)\s+(?:a|an|one)\s+{_ADJ}"
        rf"(?P<role>{EN_ROLES})\b(?!\s+[A-Z])"
    ),
    re.compile(rf"我(?:跟|和)(?:我的?)?(?P<role>{ZH_ROLES})"),
)
_NAMING = (
    re.compile(rf"\b(?:[Hh]er|[Hh]is)\s+name(?:'s|\s+is)\s+(?P<x>{PERSON_NAME})\b"),
    re.compile(rf"\b{_HE}(?:'s|\s+is)\s+(?:called|named)\s+(?P<x>{PERSON_NAME})\b"),
    re.compile(rf"[他她](?:的名字)?叫(?P<x>{_HAN})"),
)
_CALLED = re.compile(rf"(?:个|位|名)叫(?P<x>{_HAN}?)的")  # 一个叫阿杰的小伙子: a person
THIRD_PRONOUN = re.compile(r"\b(?:[Ss]he|[Hh]e)\b|[他她](?!们)")


def named_roles(sentence: str) -> Iterator[tuple[str, str, int]]:
    """(person, role, position) for each copular or naming kinship frame; person
    ``THIRD`` when a pronoun stands for them ("she's been my flatmate")."""
    for pattern in _NAMED_ROLES:
        for match in pattern.finditer(sentence):
            word = match.groupdict().get("role") or "partner"
            role = _PLURALS.get(word.lower()) or ROLES.get(word.lower()) or ROLES.get(word)
            group = "tail" if "tail" in pattern.groupindex else "x"
            name = han_tail(match[group]) if group == "tail" else person_at(match[group])
            if role and name:
                yield name, role, match.start(group)
    for pattern in _PRONOUN_ROLES:
        for match in pattern.finditer(sentence):
            yield THIRD, ROLES[match["role"].lower()], match.start()


def role_alone(sentence: str) -> str | None:
    """The role of "I have a daughter" / 我跟老公…: a relative whose name may follow."""
    for pattern in _ROLE_ALONE:
        if match := pattern.search(sentence):
            return ROLES[match["role"].lower()]
    return None


def naming(sentence: str) -> list[str]:
    """Names given to someone just mentioned: "her name is Mira", 他叫李响."""
    names = [person_at(m["x"]) for p in _NAMING for m in p.finditer(sentence)]
    return [name for name in names if name]


def called(sentence: str) -> list[str]:
    """Persons introduced by 叫…的 ("一个叫阿杰的小伙子")."""
    names = [person_at(m["x"]) for m in _CALLED.finditer(sentence)]
    return [name for name in names if name]


def person_at(text: str) -> str | None:
    """The person's name that ``text`` starts with (a Chinese one cut before its verb)."""
    return text if is_latin(text) else han_person(text)


def han_tail(run: str) -> str | None:
    """The longest Chinese name that ends ``run`` ("我觉得张秀英" → 张秀英), or None."""
    names = [run[-k:] for k in range(2, min(5, len(run)) + 1)]
    return max((n for n in names if han_person(f"{n}。") == n), key=len, default=None)


@dataclass
class Focus:
    """The person a pronoun refers to (named last, for ``FOCUS_EVENTS`` events), the speakers
    (never a pronoun's person) and a relation waiting for its name, per speaker."""

    name: str | None = None
    events: int = 0
    seen_at: int = 0
    speakers: set[str] = field(default_factory=set)
    pending: dict[str, tuple[str, int]] = field(default_factory=dict)

    def next_event(self) -> None:
        self.events += 1
        if self.events - self.seen_at > FOCUS_EVENTS:
            self.name = None

    def wait(self, speaker: str, role: str) -> None:
        self.pending[speaker] = (role, self.events)

    def waiting(self, speaker: str) -> str | None:
        """The speaker's relation said without a name in this event or the one before."""
        role, at = self.pending.get(speaker, ("", -2))
        return role if role and self.events - at <= 1 else None

    def last_in(self, text: str, persons: list[str], kin: dict[str, str]) -> str | None:
        """Whom a pronoun after ``text`` refers to: the person mentioned last in it (not a
        speaker; "my dad" / 他爸爸 unnamed: nobody known), else the focus."""
        spots = mentioned(text, persons, kin, self.speakers)
        return max(spots, key=lambda spot: spot[0])[1] if spots else self.name

    def follow(self, text: str, persons: list[str], kin: dict[str, str]) -> None:
        """After ``text``: a later pronoun refers to the person it mentioned last."""
        if spots := mentioned(text, persons, kin, self.speakers):
            self.name, self.seen_at = max(spots, key=lambda spot: spot[0])[1], self.events


_UNNAMED = re.compile(
    rf"\b(?:[Mm]y|[Oo]ur|[Hh]is|[Hh]er|[Tt]heir)\s+{_ADJ}(?P<role>{EN_ROLES})\b(?!\s*,?\s+[A-Z])"
    rf"|(?:我们?|[他她]|咱们?)的?(?P<zh>{ZH_ROLES})(?![\u4e00-\u9fff]{{0,1}}[叫名])"
)


def mentioned(
    text: str, persons: list[str], kin: dict[str, str], speakers: set[str]
) -> list[tuple[int, str | None]]:
    """(end, person) for each person ``text`` mentions: a named one, or a relative without a
    name (the speaker's known one, else None: "my dad … he" is not the last named person)."""
    spots: list[tuple[int, str | None]] = []
    for person in persons:
        if person not in speakers and (at := text.rfind(person)) >= 0:
            spots.append((at + len(person), person))
    for match in _UNNAMED.finditer(text):
        role = ROLES[(match["role"] or match["zh"]).lower()]
        own = match.group().lower().startswith(("my", "our", "我", "咱"))
        spots.append((match.end(), kin.get(role) if own else None))
    return spots
