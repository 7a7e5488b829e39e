"""Who a clause is about (issue 26): the subject before a relation verb, for the offline
graph projector's frames, English and Chinese.

The subject is the last mention before the verb in the verb's clause: a first-person word
(the speaker), a person's name, "my sister" (the sister named earlier), or "he" / "she" /
他 / 她 (``THIRD``: the projector resolves it to the person named last). A clause with no
mention takes the previous clause's subject, its first mention ("She's in Montreal, working
for Ubisoft"; 主语承前省略), skipping a relative clause ("Dmitri, who I climb with, runs …")
and reading an apposition as its name ("Tomasz, my colleague, moved …").
"""

import re
from collections.abc import Collection, Mapping

from .han_names import is_han_name
from .roles import EN_ROLES, PERSON_NAME, ROLES, SPEAKER, THIRD, ZH_ROLES
from .text import is_latin, is_person_name

_CLAUSE_BREAK = re.compile(r"[.,!?;:()\"“”—–…，。！？；：、]|\s-\s|\b(?:and|but|so|because)\b")
_FIRST = re.compile(r"\b(?:I|I'm|I've|I'd|I'll|we|We|we're|we've|my|My|our|Our)\b|我")
_THIRD = re.compile(r"\b(?:they|They|his|His|her|Her|their|Their)\b|他们|她们")
_HE_SHE = re.compile(r"\b(?:he|He|she|She)\b|[他她](?!们|的)")  # 她的 / 她女儿: a possessor
_KIN_AFTER = re.compile(rf"(?:{ZH_ROLES})")  # 他爸爸 is his father, not him
_WITH_ME = re.compile(r"我(?:和|跟|与)(?:我的?)?[\u4e00-\u9fff]{1,6}?(?=去|到|在|一起|都|是|$)")
_WORD_NAME = re.compile(PERSON_NAME)
# a capitalised word followed by a determiner or particle is a verb opening the sentence
_VERB_FIRST = re.compile(
    r"\s+(?:a|an|the|my|our|his|her|their|some|this|that|to|up|out|off|back)\b"
)


def is_name(name: str) -> bool:
    """A person's name: a capitalised non-label word, or a Chinese name as ``_SURNAMES`` /
    ``_TRANSLITERATION`` describe."""
    if is_latin(name):
        return is_person_name(name)
    return is_han_name(name)


_RELATIVE = re.compile(r"^\s*(?:who|which|that)\b")
# an apposition describing the name before it by a clause: "the friend I told you about"
_DESCRIBED = re.compile(r"^\s*(?:the|a|an)\s+[a-z]+(?:\s+[a-z]+)?\s+(?:I|we|you)\b")
_COMMON_WHO = re.compile(r"\b[a-z]+\s+who\s*$")
_POSSESSED = re.compile(r"['’]s\s+[a-z]+\s*$")
_KIN_REF = re.compile(
    rf"\b[Mm]y\s+(?:(?:older|younger|little|big|elder|twin|best)\s+)?(?P<role>{EN_ROLES})\b"
    rf"|(?:我的?|^\s*)(?P<zh>{ZH_ROLES})(?![\u4e00-\u9fff]?[叫名])"  # 表哥一家…: a relative
)


def subject_before(
    prefix: str,
    known: Collection[str],
    kin_refs: Mapping[str, str] | None = None,
    first: bool = False,
) -> str | None:
    """Who the clause before the verb is about: the last of a first-person word (the
    speaker), a person's name, or a third-person pronoun (unknown: None); nothing →
    the speaker (an elided subject is the speaker's, "Moved to Lisbon last month!")."""
    breaks = [m for m in _CLAUSE_BREAK.finditer(prefix)]
    clause = prefix[breaks[-1].end() :] if breaks else prefix
    if _COMMON_WHO.search(clause) or _POSSESSED.search(clause):  # "a sister who", "Tom's brother"
        return None
    if breaks and (_RELATIVE.match(clause) or _DESCRIBED.match(clause)):
        # "a sister, Eva, who lives …", "Ines, the friend I told you about, got …": about her
        return subject_before(prefix[: breaks[-1].start()], known, kin_refs, first)
    kin_spans = [range(m.start(), m.end()) for m in _KIN_REF.finditer(clause)]
    marks: list[tuple[int, str | None]] = []
    marks += [
        (m.start(), SPEAKER)
        for m in _FIRST.finditer(clause)
        if not any(m.start() in span for span in kin_spans)  # "my sister": the sister
    ]
    marks += [(m.start(), None) for m in _THIRD.finditer(clause)]
    marks += [
        (m.start(), None if _KIN_AFTER.match(clause, m.end()) else THIRD)
        for m in _HE_SHE.finditer(clause)
    ]
    for name in known:
        if (at := clause.rfind(name)) >= 0:
            marks.append((at if first else at + len(name), name))
    if is_latin(prefix):  # in Chinese text a capitalised Latin word is a brand, not a person
        from .entity_types import never_entity  # (entity_types reads this module's ROLES)

        names = [m for m in _WORD_NAME.finditer(clause) if is_name(m.group())]
        names = [m for m in names if not never_entity(m.group())]  # "Actually, …", "Monday"
        names = [m for m in names if not _VERB_FIRST.match(clause, m.end())]  # "Took a trip"
        marks += [(m.start() if first else m.end(), m.group()) for m in names]
    for ref in _KIN_REF.finditer(clause):
        role = ROLES[(ref["role"] or ref["zh"]).lower()]
        marks.append(
            (ref.start() if first else ref.end(), kin_refs.get(role) if kin_refs else None)
        )
    marks += [(m.end() + 1, SPEAKER) for m in _WITH_ME.finditer(clause)]  # 我和小雨去了: both
    if not marks and breaks and breaks[-1].group() in ("，", ",", "and"):
        # an elided subject is the previous clause's subject (its first mention): 承前省略
        return subject_before(prefix[: breaks[-1].start()], known, kin_refs, first=True)
    if not marks:
        return SPEAKER
    return (min if first else max)(marks, key=lambda m: m[0])[1]
