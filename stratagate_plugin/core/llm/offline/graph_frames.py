"""Relation frames of the offline graph projector (spec §4), English and Chinese.

A small closed set of frames, each a grammatical pattern rather than a list of names:

- kinship and role possessives, "my sister Ana" / "Ana, my boss" / "我妹妹安娜": a person
  node for the name, an edge speaker → name labelled by the role;
- residence, work, study and origin, "lives in / moved to / works at / studies at / grew up
  in / 住在 / 搬到 / 在…工作 / 在…上学 / 来自": an edge and a fact keyed by the relation,
  so "moved to Lisbon" later replaces "lives in Porto" (the subject is the one named just
  before the verb: "my sister Ana lives in Porto" is about Ana);
- travel, "visited / been to / trip to Rome" / "去过罗马" (past forms only: "planning to
  visit" is a plan; bare 去 goes to activities as often as places): a ``visited`` edge
  (places accumulate);
- tools used or owned, "I use Notion" / "bought a Kindle" / "我用Notion";
- favourites, "my favorite book is Dune" / "我最喜欢的书是沙丘": a fact keyed by what;
- self-introduction, "I'm Mara" / "my name is Mara" / "call me Mara" / "我叫玛拉": an
  alias of the speaker's node (``4.`` of resolution: a proven alias).
"""

import re
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass

from .entity_types import never_entity
from .gazetteer import HAN_PLACES
from .groups import GROUP_NAMED, GROUPS, HAN_GROUPS
from .han_names import HAN_NAMED, HAN_STOP, NOT_FIRST, called, generic_group, han_person
from .roles import (
    EN_ROLES,
    EXCLUSIVE_ROLES,
    HAN_RUN,
    PERSON_NAME,
    ROLES,
    SPEAKER,
    THIRD,
    ZH_ROLES,
    proper_name,
)
from .subjects import is_name, subject_before
from .text import is_latin, word_set
from .verb_frames import VERB_FRAMES

_NAME = proper_name(3)
_LATIN_TOOL = r"[A-Z][A-Za-z0-9.+#-]*(?:\s[A-Z0-9][A-Za-z0-9.+#-]*){0,2}"

_KIN = (
    re.compile(
        rf"\b[Mm]y\s+(?:(?:older|younger|little|big|elder|baby|twin|best|oldest|youngest|new)\s+)?"
        rf"(?P<role>{EN_ROLES})\s*,?\s+(?P<x>{PERSON_NAME})\b"
    ),
    re.compile(rf"\b(?P<x>{PERSON_NAME}),\s+my\s+(?:\w+\s+)?(?P<role>{EN_ROLES})\b"),
    re.compile(rf"\b[Oo]ur\s+(?P<role>{EN_ROLES})\s*,?\s+(?P<x>{PERSON_NAME})\b"),
    re.compile(rf"(?:我们?|咱们?|[和跟与陪带]着?)(?:家)?的?(?P<role>{ZH_ROLES})(?P<x>{HAN_RUN})"),
)
# (relation, target type, fact key or None, patterns)
PLACES_AND_WORK: tuple[tuple[str, str, str | None, tuple[re.Pattern[str], ...]], ...] = (
    ("lives_in", "place", "lives_in", (
        re.compile(rf"\b(?:lives?|living|(?:'ve|have|has|'s) lived|moved|relocated|moving|settled"
                   rf"|relocating)\s+"
                   rf"(?:back\s+)?(?:in|to)\s+(?P<x>{_NAME})"),
        re.compile(rf"(?:住在|搬到了?|搬去了?|定居在?|搬家到)(?P<x>{HAN_RUN}|{_NAME})"),
    )),
    ("works_at", "organization", "works_at", (
        re.compile(rf"\b(?:work(?:s|ed|ing)?|job|employed|intern(?:s|ed|ing)?)\s+(?:at|for)\s+"
                   rf"(?P<x>{_NAME})"),
        re.compile(rf"\b(?:joined|hired by|job at)\s+(?:the\s+)?(?:an?\s+(?:\w+\s+)?"
                   rf"(?:startup|company|firm|agency|studio)\s+(?:called|named)\s+)?(?P<x>{_NAME})"),
        re.compile(rf"\b(?:'m|am|is|'s|was|are)\s+an?\s+(?!volunteer\b)(?:[a-z]+\s+){{0,2}}[a-z]*(?:er|or|ist|ian"
                   rf"|ant|nurse|chef|cook|pilot|clerk|barista|vet|tutor|coach)\s+at\s+(?:the\s+)?"
                   rf"(?P<x>{_NAME})"),
        re.compile(rf"\b(?:teach|teaches|taught|run|runs|manage|manages|lead|leads)\b[^.,!?;]{{0,30}}?"
                   rf"\bat\s+(?:the\s+)?(?P<x>{_NAME})"),
        re.compile(rf"在(?P<x>{HAN_RUN}?|{_NAME})(?:教书|(?<![当做])教|执教)"),
        re.compile(r"(?:在|加入了?)一家(?:叫|名叫)(?P<x>[\u4e00-\u9fffA-Za-z]{2,6}?)的"),
        re.compile(rf"在(?P<x>{HAN_RUN}?|{_NAME})(?:当|做|担任)[\u4e00-\u9fff]{{0,4}}(?:师|(?<![会成])员|经理|医生|护士|教授)"),
        re.compile(r"是(?P<x>[\u4e00-\u9fffA-Za-z]{2,8}?)的[\u4e00-\u9fff]{0,4}(?:师|(?<![会成])员|经理|医生|护士)"),
        re.compile(rf"(?:入职了?|就职于|供职于|任职于|加入了?)(?P<x>{HAN_RUN}|{_NAME})"),
        re.compile(rf"在(?P<x>{HAN_RUN}?|{_NAME})(?:工作(?!室|坊)|上班|任职|实习)"),
        # a job lost or left (a former employer): 丢了Door Dash的工作, 在德勤辞了工作
        re.compile(rf"(?:丢了|辞了|辞掉了?|离开了?)在?(?P<x>{HAN_RUN}?|{_NAME})的工作"),
        re.compile(rf"在(?P<x>{HAN_RUN}?|{_NAME})(?:丢了|辞了|辞掉了?)工作"),
    )),
    ("studies_at", "organization", "studies_at", (
        re.compile(rf"\b(?:stud(?:y|ies|ied|ying)|enrolled|student|degree)\s+at\s+(?:the\s+)?"
                   rf"(?P<x>{_NAME})"),
        re.compile(rf"\b(?:go|goes|went|going)\s+to\s+(?:school|college|university)\s+at\s+"
                   rf"(?P<x>{_NAME})"),
        re.compile(rf"在(?P<x>{HAN_RUN}?|{_NAME})(?:上学|读书|念书|读大学|读研|留学)"),
        re.compile(rf"就读于(?P<x>{HAN_RUN}|{_NAME})"),
        re.compile(r"(?:上了?|读|考上了?|考进了?)(?P<x>(?:(?![的了])[\u4e00-\u9fff]){2,6}(?:小学|中学|大学|学院|学校|幼儿园))"),
    )),
    ("from", "place", "from", (
        re.compile(rf"\b(?:[Gg]rew up in|(?:am|[Ii]'m|is|are|come|comes|came)(?:\s+originally)?"
                   rf"\s+from|[Bb]orn in)"
                   rf"\s+(?P<x>{_NAME})"),
        re.compile(rf"(?:来自|老家在|老家是|出生在|出生于|家乡是)(?P<x>{HAN_RUN}|{_NAME})"),
        re.compile(rf"\b[Mm]y\s+(?:home\s+country|hometown|home\s+town|native\s+country)\s*,?\s+"
                   rf"(?P<x>{_NAME})"),
        re.compile(rf"我(?:的|在)?(?:祖国|家乡|老家)(?:在|是)?[，,]?(?P<x>{HAN_RUN}|{_NAME})"),
    )),
    ("visited", "place", None, (
        re.compile(rf"\b(?:visited|[Bb]een\s+(?:(?:only|just|already|also|even)\s+)?to|trip to"
                   rf"|travel(?:l)?ed to|flew to|went to|drove to|"
                   rf"vacationed in|holiday in)\s+(?P<x>{_NAME})"),
        re.compile(rf"(?:去过|(?<![遇看听想得收找受达感提碰])到过|游览了|去了)(?:一次|两次|几次|好几次|一?趟)?(?P<x>{HAN_RUN}|{_NAME})"),
    )),
    ("uses", "tool", None, (
        re.compile(rf"\b(?:use|uses|used|using|switched to|switching to|installed|downloaded)\s+"
                   rf"(?:(?:a|an|the|my|our)\s+)?(?:new\s+)?(?P<x>{_LATIN_TOOL})"),
        re.compile(rf"(?:用|使用|在用|改用|换成了?|换到了?)(?:一[台个部款])?\s*(?P<x>{_LATIN_TOOL})"),
        re.compile(r"(?:开始用|改用|换成了?|在用|使用|安装了?|下载了?)(?P<x>[\u4e00-\u9fff]{2,4})"),
    )),
    ("member_of", "organization", None, (
        re.compile(rf"\b(?:member of|belong to|joined|signed up for|signed up with)\s+"
                   rf"(?:the\s+|a\s+)?(?P<x>{_NAME})"),
        re.compile(rf"(?:加入了?|参加了?)(?P<x>{HAN_RUN})"),
        re.compile(rf"是(?P<x>{HAN_RUN}?)的(?:会员|成员|一员)"),
        # a group named as ours: "our choir, 'Northern Voices'", "joined a club called X"
        re.compile(rf"\b(?:[Mm]y|[Oo]ur)\s+(?:new\s+|own\s+)?{GROUPS}\s*(?:,\s*|\s+(?:is\s+)?"
                   rf"(?:called|named)\s+)['‘“\"]?(?P<x>{_NAME})"),
        re.compile(rf"\b(?:joined|join|joining|belong to|member of|started|founded|in)\s+"
                   rf"(?:a|an|the)\s+(?:[\w-]+\s+){{0,3}}?{GROUPS}\s+(?:called|named)\s+['‘“\"]?(?P<x>{_NAME})"),
        re.compile(rf"(?:我们?|咱们)的?{HAN_GROUPS}(?:叫做?|名叫|名字叫)(?:[‘'“\"《「](?P<q>[^’'”\"》」]{{2,16}})"
                   rf"[’'”\"》」]|(?P<x>{HAN_RUN}))"),
    )),
    ("works_on", "project", None, (
        re.compile(rf"\b(?:working on|work on|works on|leading|launch(?:ed|ing)?|building"
                   rf"|developing)\s+"
                   rf"(?:the\s+)?(?:(?:a|an|my|our)\s+(?:[a-z-]+\s+){{0,2}}?(?:called|named)\s+)?"
                   rf"(?P<x>{_NAME})"),
        re.compile(r"一个(?:叫|名叫)(?P<x>[\u4e00-\u9fffA-Za-z]{1,8}?)的(?:项目|计划|应用|产品)"),
        re.compile(r"(?:在做|负责|在搞|做)(?P<x>[\u4e00-\u9fffA-Za-z]{1,8}(?:项目|计划))"),
    )),
    ("knows", "person", None, (
        re.compile(rf"\b(?:met|got to know)\s+(?P<x>{PERSON_NAME})\b"),
        re.compile(r"(?:认识了?|结识了?)(?P<x>[\u4e00-\u9fff·]{2,4})"),
    )),
    ("owns", "person", None, (
        re.compile(rf"\b(?:own|owns|owned)\s+(?P<x>{PERSON_NAME})\b"),
    )),
)  # fmt: skip
_FAVOURITE = (
    re.compile(
        r"\b[Mm]y\s+(?:all-time\s+)?favou?rite\s+(?P<what>[a-z]+(?:\s[a-z]+)?)\s+"
        r"(?:is|are|was|has to be)\s+(?P<x>[^.,!?;]{2,60})"
    ),
    re.compile(r"我最喜欢的(?P<what>[\u4e00-\u9fff]{1,4}?)是(?P<x>[^，。！？,.!?；]{1,30})"),
)
_SELF = (
    re.compile(
        rf"(?:\b[Mm]y name is|\b[Mm]y name's|\b[Cc]all me|\bI'm called|\bI am called|\bI'm|\bI am)"
        rf"\s+(?P<x>{PERSON_NAME})(?=\s*(?:[,.!?;)]|$|\s(?:and|here|from|by)\b))"
    ),
    re.compile(
        rf"(?:我叫|我的名字是|我的名字叫|叫我|大家都叫我|大家叫我)(?P<x>{HAN_RUN}|{PERSON_NAME})"
    ),
    re.compile(r"我是(?P<x>[\u4e00-\u9fff·]{2,4})(?=[，。！？,.!?；]|$)"),
)


@dataclass(frozen=True)
class Mention:
    """``subject -relation-> target`` said in one sentence; ``subject`` SPEAKER: the speaker."""

    subject: str | None
    relation: str
    target: str
    kind: str
    exclusive: bool = True
    fact_key: str | None = None
    at: int = 0  # where the frame starts in the sentence


def kin(sentence: str) -> Iterator[tuple[str, str]]:
    """(name, role) for every "my <role> <Name>" of the sentence."""
    for pattern in _KIN:
        for match in pattern.finditer(sentence):
            name = _person(match["x"])
            if name and is_name(name):
                yield name, ROLES[match["role"].lower()]


def mentions(
    sentence: str, people: Collection[str], kin_refs: Mapping[str, str] | None = None
) -> list[Mention]:
    """Every frame of the sentence; ``people``: names known to be persons (never a target,
    except of ``knows`` / ``owns``); ``kin_refs``: relation → the speaker's relative named
    earlier, so "my sister" alone is that person."""
    relatives = dict(kin(sentence))
    known = {*people, *relatives}
    found = [
        Mention(SPEAKER, role, name, "person", role in EXCLUSIVE_ROLES)
        for name, role in relatives.items()
    ]
    theirs = _their_kin(sentence, known)
    found += theirs
    known |= {mention.target for mention in theirs}
    kin_refs = {**(kin_refs or {}), **{role: name for name, role in relatives.items()}}
    for relation, kind, key, patterns in (*PLACES_AND_WORK, *VERB_FRAMES):
        for pattern in patterns:
            for match in pattern.finditer(sentence):
                said = _frame_mention(sentence, match, (relation, kind, key), known, kin_refs)
                if said is not None and not _said(found, said.relation, said.target):
                    found.append(said)
    return found


def _frame_mention(
    sentence: str,
    match: re.Match[str],
    frame: tuple[str, str, str | None],
    known: Collection[str],
    kin_refs: Mapping[str, str],
) -> Mention | None:
    """The mention one frame's match states, or None (a planned or denied trip)."""
    relation, kind, key = frame
    target = _target(match, relation, known)
    clause = _clause_of(sentence, match)
    if target is None or (
        relation == "visited" and (_PLAN.search(clause) or _NEGATED.search(clause))
    ):
        return None  # "planning a trip to Oslo", "never been to Japan", 从来没去过巴黎
    subject = (
        SPEAKER  # "my home country, Sweden": the possessor's
        if _POSSESSIVE.match(match.group())
        else THIRD  # "her flat in Brixton": whom "her" refers to
        if _THIRD_POSSESSIVE.match(match.group())
        else subject_before(sentence[: match.start()], known, kin_refs)
    )
    if relation == "works_at" and _ENDED.search(clause) and not _PLAN.search(clause):
        relation, key = "worked_at", None  # "lost my job at Door Dash": a former employer
    if subject == target:
        return None
    return Mention(subject, relation, target, kind, key is not None, key, match.start())


_PLAN = re.compile(
    r"\b(?:plan|plans|planning|planned|going to|gonna|will|'ll|want to|wanna|hope to|hoping to"
    r"|would like to|next|upcoming|someday|one day|might|may|considering|thinking (?:of|about))\b"
    r"|计划|打算|准备|想去|要去|明天|下周|下个月|明年|可能|考虑"
)
_NEGATED = re.compile(r"\b(?:never|not|haven't|hasn't|didn't|don't|n't)\b|没|从未|未曾")
_CLAUSE_EDGE = re.compile(r"[.,!?;:，。！？；：]|\b(?:and|but)\b")


_ENDED = re.compile(
    r"\b(?:lost|quit|left|fired|laid off|retired)\b|丢了|辞了|辞掉|辞职|离开了|被裁|退休"
)


def _clause_of(sentence: str, match: re.Match[str]) -> str:
    edges = [m.end() for m in _CLAUSE_EDGE.finditer(sentence, 0, match.start())]
    after = _CLAUSE_EDGE.search(sentence, match.end())
    return sentence[max(edges, default=0) : after.start() if after else len(sentence)]


def _said(found: list[Mention], relation: str, target: str) -> bool:
    """A tight frame already gave this relation to this target (a looser one matched too)."""
    return any(m.relation == relation and m.target == target for m in found)


_MEMBERSHIP = re.compile(
    r"\s(?:Club|Society|Association|League|Choir|Band|Team|Orchestra|Union|Council|Circle|Guild"
    r"|Crew|Collective)$|(?:读书会|俱乐部|协会|社团|合唱团|乐队|跑团|球队|学会|协会|社|队)$"
)
_HAN_PLACE = re.compile(rf"^(?:{'|'.join(HAN_PLACES)})$|[市省县州国岛山湖镇村]$")
_HAN_GENERIC = word_set(
    """附近 家里 家 这里 那里 这儿 那儿 外地 国外 本地 当地 城里
    市里 公司 单位 学校 医院 大学 中学 小学 办公室 店里 网上 线上
    工厂 银行 餐厅 健身房 图书馆 俱乐部 项目 计划 超市 市场 菜市场 外面
    外边 里面 县里 乡下 农村 老家"""
)
_POSSESSIVE = re.compile(r"[Mm]y\b|[Oo]ur\b|我(?:的|在)?(?:祖国|家乡|老家)")
_THIRD_POSSESSIVE = re.compile(r"(?:[Hh]is|[Hh]er)\b")
_ERRAND = re.compile(r"去(?!过)")  # 去了 / 去…了: a place, or an errand
_TRIP = re.compile(r"旅行|旅游|度假|一趟")
_CALLED = re.compile(r"叫(?P<x>[\u4e00-\u9fff·]{2,4})的")  # 一个叫大卫的人: a person's name
_HAN_INDEFINITE = re.compile(r"[一两几这那每某][所家个间座位名只]")  # 一所学校: "a school"
_MEMBER_WORDS = re.compile(rf"member|belong|volunteer|会员|成员|一员|志愿者|义工|{GROUP_NAMED}")
_PERSON_RELATIONS = ("knows", "owns")


def _target(match: re.Match[str], relation: str, known: Collection[str]) -> str | None:
    """The frame's target, or None: a known person (unless the frame is about people), a
    club as a workplace, or a non-club joined (that is work, not membership)."""
    if quoted := (match.groupdict().get("q") or "").strip():  # 我们的团体叫‘联结行动者’
        return None if quoted in known or never_entity(quoted) else quoted
    bounded = match.end("x") < match.end() and not is_latin(match["x"])  # 在…工作: all of it
    raw = match["x"].lstrip("在").rstrip("的") if bounded else match["x"]  # 现在在美团: 美团
    target = raw if bounded and 2 <= len(raw) <= 8 else _name(raw)
    if match.string.startswith("+", match.end("x")):
        return None  # "the LGBTQ+ community": a modifier of the noun after it
    if not target or target.endswith(("'s", "’s")) or target[0] in NOT_FIRST:
        return None
    trip = _TRIP.search(match.string)  # 去英格兰的那次旅行, 去了一趟西安，还去了洛阳: a trip
    if (
        relation == "visited"
        and _ERRAND.match(match.group())
        and not (trip or _HAN_PLACE.search(target))
    ):
        return None  # 去了超市 is an errand; 去了厦门 a trip
    if target in _HAN_GENERIC or _HAN_INDEFINITE.search(target) or generic_group(target):
        return None  # 在附近工作, 在公司上班: a common noun, not a name
    if relation in ("works_at", "studies_at") and _HAN_PLACE.search(target):
        return None  # 在上海做产品经理: where, not whom for
    if relation in _PERSON_RELATIONS:
        called = _CALLED.search(match.group())
        return target if is_name(target) or (called and called["x"] == target) else None
    if target in known or target.split()[0] in known:
        return None
    club = _MEMBERSHIP.search(target) is not None
    if relation == "works_at" and club:
        return None
    if relation == "member_of" and not club and not _MEMBER_WORDS.search(match.group()):
        return None
    return target


_THEIR_KIN = re.compile(
    rf"\b(?P<s>{PERSON_NAME})(?:'s\s+|\s+has\s+an?\s+(?:(?:older|younger|little|big|twin)\s+)?)"
    rf"(?P<role>{EN_ROLES})\s*,?\s+(?:(?:called|named)\s+)?(?P<x>{PERSON_NAME})\b"
)


_THEIR_KIN_ZH = re.compile(
    rf"(?P<s>[\u4e00-\u9fff·]{{2,5}}?)(?:有(?:一)?个|的)(?P<role>{ZH_ROLES})(?:叫|名叫)?(?P<x>{HAN_RUN})"
)


def _their_kin(sentence: str, known: Collection[str]) -> list[Mention]:
    """ "Clara has a sister, Eva" / "Clara's sister Eva" / 克拉拉有个妹妹叫贝贝:
    Clara -sister-> Eva."""
    found = []
    for match in [*_THEIR_KIN.finditer(sentence), *_THEIR_KIN_ZH.finditer(sentence)]:
        subject, name = _person(match["s"]), _person(match["x"])
        if not subject or not name or subject.startswith(("我", "你")):
            continue
        if is_name(subject) and is_name(name) and subject != name:
            role = ROLES[match["role"].lower()]
            found.append(Mention(subject, role, name, "person", role in EXCLUSIVE_ROLES))
    return found


def favourites(sentence: str) -> list[tuple[str, str]]:
    """("favorite_<what>", value) for "my favorite <what> is <value>" / 我最喜欢的…是…"""
    found = []
    for pattern in _FAVOURITE:
        for match in pattern.finditer(sentence):
            what = "_".join(match["what"].lower().split())
            if value := match["x"].strip(" '\""):
                found.append((f"favorite_{what}", value))
    return found


def self_names(sentence: str, others: Collection[str] = ()) -> list[str]:
    """Names the speaker gives themself ("I'm Mara", "我叫玛拉"), never one of ``others``."""
    names = []
    for pattern in _SELF:
        for match in pattern.finditer(sentence):
            name = _person(match["x"]) or called(match["x"])
            if name and name not in others and (is_name(name) or name == called(match["x"])):
                names.append(name)
    return names


def _person(text: str) -> str | None:
    return _name(text) if is_latin(text) else han_person(text.strip())


def _name(text: str) -> str | None:
    """The name matched: a Chinese one cut before a verb or function character
    ("安娜住在" → "安娜"), at most four characters; a Latin one without a trailing dot."""
    text = text.strip(" .,'《》「」“”-")  # "California- a sunset": a dash ends the name
    if re.match(r"[\u4e00-\u9fff]", text):
        place = max((p for p in HAN_PLACES if text.startswith(p)), key=len, default=None)
        named = HAN_NAMED.match(text) or (place and re.match(re.escape(place), text))
        cut = next((i for i, c in enumerate(text) if i >= 1 and c in HAN_STOP), len(text))
        text = named.group() if named else text[: min(cut, 4)]
    else:  # "Mel for Thanksgiving": the name before "for" / "of" a date
        parts = re.split(r"\s+(?:for|of)\s+(?:the\s+)?", text, maxsplit=1)
        text = parts[0] if len(parts) == 2 and never_entity(parts[1]) else text
    return text if len(text) >= 2 and text[0] not in NOT_FIRST else None
