"""Kinship and role nouns (a small closed list, English and Chinese), the subject markers
the offline graph projector's frames return, and the name patterns its frame modules share."""

from collections.abc import Iterable

SPEAKER = ""  # a mention's subject: the one who said it
THIRD = "\x00third"  # a mention's subject: the person a pronoun (he, she, 他, 她) refers to
ROLES = {
    "sister": "sister", "brother": "brother", "mother": "mother", "mom": "mother",
    "mum": "mother", "father": "father", "dad": "father", "wife": "wife",
    "husband": "husband", "partner": "partner", "boyfriend": "partner", "girlfriend": "partner",
    "fiance": "partner", "fiancé": "partner", "fiancee": "partner", "fiancée": "partner",
    "son": "son", "daughter": "daughter", "kid": "child", "child": "child", "friend": "friend",
    "cousin": "cousin", "aunt": "aunt", "uncle": "uncle", "grandma": "grandmother",
    "grandmother": "grandmother", "grandpa": "grandfather", "grandfather": "grandfather",
    "niece": "niece", "nephew": "nephew", "boss": "boss", "manager": "boss",
    "colleague": "colleague", "coworker": "colleague", "co-worker": "colleague",
    "roommate": "roommate", "neighbor": "neighbour", "neighbour": "neighbour",
    "flatmate": "roommate", "housemate": "roommate", "mate": "friend", "parents": "parent",
    "buddy": "friend", "pal": "friend", "bestie": "friend",
    "mother-in-law": "mother_in_law", "father-in-law": "father_in_law",
    "godmother": "godparent", "godfather": "godparent", "stepmother": "stepmother",
    "stepfather": "stepfather", "stepson": "stepson", "stepdaughter": "stepdaughter",
    "mentor": "mentor", "teacher": "teacher", "therapist": "therapist", "coach": "coach",
    "妹妹": "sister", "姐姐": "sister", "哥哥": "brother", "弟弟": "brother", "妈妈": "mother",
    "母亲": "mother", "爸爸": "father", "父亲": "father", "丈夫": "husband", "老公": "husband",
    "妻子": "wife", "老婆": "wife", "太太": "wife", "先生": "husband",
    "男朋友": "partner", "女朋友": "partner",
    "未婚夫": "partner", "未婚妻": "partner", "儿子": "son", "女儿": "daughter",
    "孩子": "child", "朋友": "friend", "好朋友": "friend", "闺蜜": "friend", "表姐": "cousin",
    "表妹": "cousin", "表哥": "cousin", "表弟": "cousin", "堂姐": "cousin", "堂妹": "cousin",
    "堂哥": "cousin", "堂弟": "cousin", "阿姨": "aunt", "姑姑": "aunt", "叔叔": "uncle",
    "舅舅": "uncle", "奶奶": "grandmother", "外婆": "grandmother", "爷爷": "grandfather",
    "外公": "grandfather", "老板": "boss", "上司": "boss", "同事": "colleague",
    "室友": "roommate", "邻居": "neighbour", "导师": "mentor", "老师": "teacher",
    "教练": "coach", "妈": "mother", "爸": "father", "哥": "brother", "姐": "sister",
    "弟": "brother", "妹": "sister", "婆婆": "mother_in_law", "岳母": "mother_in_law",
    "公公": "father_in_law", "岳父": "father_in_law", "父母": "parent", "爸妈": "parent",
}  # fmt: skip
# one at a time: a new one replaces the old (the others accumulate)
EXCLUSIVE_ROLES = frozenset({"wife", "husband", "partner", "boss", "mother", "father"})
# relations a person has one of, or a few, each a known person: "my sister" in a later batch is
# the graph's sister when it holds exactly one (friends, colleagues … are many: never guessed)
KIN_RELATIONS = frozenset({
    "sister", "brother", "mother", "father", "wife", "husband", "partner", "son", "daughter",
    "child", "cousin", "aunt", "uncle", "grandmother", "grandfather", "niece", "nephew",
    "mother_in_law", "father_in_law", "godparent", "stepmother", "stepfather", "stepson",
    "stepdaughter", "boss",
})  # fmt: skip


def alternation(words: Iterable[str]) -> str:
    """``words`` as a regex alternation, longest first: a word never loses to its own prefix."""
    return "|".join(sorted(words, key=len, reverse=True))


EN_ROLES = alternation(r for r in ROLES if r.isascii())
ZH_ROLES = alternation(r for r in ROLES if not r.isascii())
# a title stays with the name it precedes ("Dr. Alvarez" is one name, never "Dr"), and a
# Chinese title follows a surname (李教授, 王老师: a person named with the title, as in English)
EN_TITLES = ("Dr", "Mr", "Mrs", "Ms", "Mx", "Prof")
HAN_TITLES = ("教授", "老师", "医生", "先生", "女士", "经理", "律师", "大夫", "师傅")
TITLE = rf"(?:{'|'.join(EN_TITLES)})\.?\s"
PERSON_NAME = rf"(?:{TITLE})?[A-ZÀ-Þ][a-zß-ÿ]+(?:\s[A-ZÀ-Þ][a-zß-ÿ]+)?"
HAN_RUN = r"[\u4e00-\u9fff·]{2,8}"  # a Chinese run a frame's object is cut from
_NAME_WORD = r"[A-ZÀ-Þ][A-Za-zÀ-ÿ0-9'.&-]*"


def proper_name(more_words: int, ampersand: bool = False) -> str:
    """A capitalised name of one word and up to ``more_words`` more, joined by a space or
    of / for (the) / de ("University of the Arts", "Banco de Portugal"), and by & where
    ``ampersand`` ("Marks & Spencer")."""
    joiners = r"(?:of|for)\s+(?:the\s+)?|de\s+" + (r"|&\s+" if ampersand else "")
    return rf"{_NAME_WORD}(?:\s+(?:{joiners})?{_NAME_WORD}){{0,{more_words}}}"


def titled(name: str) -> str | None:
    """The surname of a titled name ("Dr. Alvarez" → "Alvarez", 李教授 → 李), else None."""
    first, _, rest = name.partition(" ")
    if rest and first.rstrip(".") in EN_TITLES:
        return rest
    title = next((t for t in HAN_TITLES if name.endswith(t)), None)
    return name[: -len(title)] if title and 1 <= len(name) - len(title) <= 2 else None
