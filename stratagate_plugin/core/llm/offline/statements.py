"""Durable statements about a person (issue 26): the frames that make a plain sentence such
as "My sister Ana lives in Porto", "I use Obsidian for my notes", "My dog Biscuit is a
beagle" or 我用Obsidian记笔记 an event card, so the graph has something to hold.

Each frame is a grammatical pattern around a small closed word class (kinship and role
nouns, pets, diets) or a word shape (a capitalised name, an agent noun such as
"designer"), never a list of the names or things themselves. The subject must be the
speaker, someone possessed ("my sister", "our dog") or a name, so "This is a great idea"
or "Paris is a city" state nothing about a person. Which frame matched is the statement's
kind; ``statement_kind`` returns the first, in the order of ``FRAMES``.

It also says which capitalised names a statement marks as something other than a person
(the tool after "use", the pet after "my dog", the club after "member of"), so a card's
participants stay people.
"""

import re

from .text import is_person_name

_NAME = r"[A-Z][a-z]+"
_LATIN_NAME = r"[A-Z][A-Za-z0-9+#&'-]*(?:\.[A-Za-z0-9]+)*"
_LATIN_NAMES = rf"{_LATIN_NAME}(?:\s+(?:(?:of|de|for|the)\s+)?{_LATIN_NAME}){{0,3}}"
_ADJ = r"(?:[a-z-]+ ){0,2}"  # "older", "little", "best"
KIN = (
    r"(?:sister|brother|sibling|mother|mom|mum|father|dad|parents?|wife|husband|spouse"
    r"|partner|boyfriend|girlfriend|fianc[ée]e?|son|daughter|kids?|child|children|baby"
    r"|grand(?:ma|pa|mother|father|son|daughter|parents?)|aunt|uncle|cousin|niece|nephew"
    r"|in-laws?|(?:step|half-)(?:sister|brother|mother|father|son|daughter)"
    r"|friend|roommate|flatmate|neighbou?r|colleague|co-?worker|boss|manager|mentor"
    r"|teammate|classmate|bandmate|landlord|landlady|therapist|coach)s?"
)
PET = (
    r"(?:dog|puppy|pup|cat|kitten|kitty|hamster|rabbit|bunny|parrot|bird|budgie|fish"
    r"|goldfish|turtle|tortoise|snake|lizard|gecko|horse|pony|guinea pig|ferret|pet"
    r"|beagle|labrador|retriever|poodle|terrier|corgi|husky|spaniel|collie|dachshund|pug"
    r"|bulldog|tabby)s?"
)
_KIN_ZH = (
    r"(?:妈妈|母亲|爸爸|父亲|父母|爸妈|妹妹|姐姐|哥哥|弟弟|姐妹|兄弟|儿子|女儿|孩子|老婆|妻子|太太"
    r"|老公|丈夫|先生|男朋友|女朋友|男友|女友|未婚[夫妻]|爷爷|奶奶|外公|外婆|姥姥|姥爷|叔叔|阿姨"
    r"|舅舅|姑姑|表[哥姐弟妹]|堂[哥姐弟妹]|侄[子女]|外甥女?|朋友|好友|闺蜜|室友|邻居|同事|老板"
    r"|上司|领导|经理|导师|老师|教练|同学|队友)"
)
_PET_ZH = r"(?:狗狗?|小狗|猫咪?|小猫|兔子|仓鼠|鹦鹉|金鱼|鱼|乌龟|马|宠物)"
# An agent noun names a role by its shape ("designer", "dentist", "librarian"); a few
# common roles have no such ending.
_ROLE_NOUN = (
    r"[a-z-]+(?:er|or|ist|ian|ant|ent|eer|ive|ic|ee)|nurse|chef|cook|vet|coach|pilot|nanny"
    r"|student|mom|mum|dad|parent|veteran|engineer|artist|lawyer|judge|monk|priest"
)
_GROUP = (
    r"band|club|team|choir|group|league|society|orchestra|association|union|troupe|crew"
    r"|guild|chapter|committee|board|church|congregation|gym|circle|party|movement"
)
_I = r"(?i:i)"
_NUM_ZH = r"[\d一二三四五六七八九十两]+"
FRAMES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("introduction", re.compile(
        rf"^(?:{_I}'m|{_I} am|(?i:my name is|my name's|call me))\s+(?P<name>{_NAME})\b(?!'s)"
        r"|^(?:我叫|我的名字(?:是|叫))")),
    ("relation", re.compile(
        rf"(?i:\b(?:my|our|his|her|their)) {_ADJ}(?i:{KIN})(?:,)?\s+(?:(?P<name>{_NAME})\b"
        rf"|(?i:is|'s|are) (?i:called|named))"
        rf"|\b(?P<holder>{_NAME})(?:'s| is| are) (?i:my|our|his|her|their) {_ADJ}(?i:{KIN})\b"
        rf"|(?i:(?<!to )\b(?:has|have|got) (?:a|an|one|two|three|four|five|\d+) {_ADJ}{KIN}\b"
        r"(?! like))"
        rf"|(?i:\b(?:married to|engaged to|dating|divorced from)) {_NAME}")),
    ("relation", re.compile(
        rf"我(?:的|们的?)?{_KIN_ZH}(?:叫|名叫)|是我(?:的|们的?)?{_KIN_ZH}"
        rf"|有(?:一|两|三|四|几)?(?:个|位){_KIN_ZH}|(?:跟|和)[\u4e00-\u9fff]{{1,4}}结婚了")),
    ("pet", re.compile(
        rf"(?i:\b(?:my|our|his|her|their)) {_ADJ}(?i:{PET})\b(?:,)?\s+(?:{_NAME}\b"
        rf"|(?i:is|'s) (?i:a|an|called|named)\b)"
        rf"|(?i:\b(?:have|has|own|owns|got|adopted) (?:a|an|one|two|three|\d+) {_ADJ}{PET}\b)"
        rf"|\b{_NAME}, (?i:my|our) {_ADJ}(?i:{PET})(?=\s*[,.!?;)]|\s*$)")),
    ("pet", re.compile(rf"养了?(?:一|两|三|几)?[只条匹头]?{_PET_ZH}|我(?:的|家的?){_PET_ZH}")),
    ("membership", re.compile(
        r"(?i:\b(?:member of|belongs? to)) (?:(?i:a|an|the|our|my)\b|[A-Z])"
        r"|(?i:\b(?:(?:sing|play|dance)s? (?:\w+ ){0,2}(?:in|for|on)|(?:am|'m|is|are|'re) (?:in|on)"
        rf"|part of) (?:a|an|the|our|my) (?:[\w'-]+ ){{0,3}}(?:{_GROUP})\b)")),
    ("membership", re.compile(
        r"成员|会员|(?:加入了?|参加了?|在)[\u4e00-\u9fff]{1,8}(?:俱乐部|社团|协会|乐队|合唱团|球队)")),
    ("study", re.compile(
        r"(?i:\b(?:study|studies|studying|major(?:s|ing)? in|student (?:at|of)|enrolled (?:at|in)"
        r"|go(?:es)? to (?:[\w'-]+ ){0,4}(?:school|college|university|academy|elementary"
        r"|high|kindergarten|preschool)))\b")),
    ("study", re.compile(
        r"在[\u4e00-\u9fff]{1,10}(?:读|上)(?:大学|研究生|博士|硕士|高中|初中|小学|幼儿园|书|学)"
        r"|读(?:大学|研究生|博士|硕士|高中)|专业是|主修|学的是|跟着?[\u4e00-\u9fff]{1,6}学")),
    ("work", re.compile(
        r"(?i:\b(?:works?|working) (?:as|at|for|in)\b|\b(?:i|we|he|she) teach(?:es)?\b"
        r"|\bemployed (?:by|at)\b|\bhired (?:by|at)\b"
        r"|\bmy (?:job|role|position) is\b|\b(?:i'm|i am) (?:responsible for|in charge of)\b"
        r"|\b(?:i|we) (?:lead|manage|run) the\b|\b(?:i|we) (?:run|own|manage) (?:a|an|the|my|our)\b"
        rf"|\b(?:i'm|i am) (?:a|an) {_ADJ}(?:{_ROLE_NOUN})\b)")),
    ("work", re.compile(r"在[\u4e00-\u9fff]{1,8}(?:工作|上班|任职|教(?![育训会]))(?!室)"
                 r"|我(?:主要)?负责"
                 r"|在[\u4e00-\u9fff]{1,8}做[\u4e00-\u9fff]{0,4}(?:[师员]|经理|主管|总监)"
                 r"|^[^你您，,。]{0,8}是[\u4e00-\u9fff]{2,10}的[\u4e00-\u9fff]{0,4}(?:[师员士]|医生)"
                 r"|当[\u4e00-\u9fff]{1,4}[员师士工生]"
                 r"|是(?:一名|一位|一个|个)[\u4e00-\u9fff]{1,6}(?:师|员|生|家|工|长)")),
    ("residence", re.compile(
        r"(?i:\b(?:lives?|living|based|settled) in\b|\b(?:i'm|i am|we're|we are|is|are) from\b"
        r"|\bgrew up in\b|\bmy (?:hometown|home town) is\b)")),
    ("residence", re.compile(r"住在|(?:我|他|她)们?来自|定居|老家(?:是|在)|家乡(?:是|在)")),
    ("role", re.compile(
        rf"^(?i:(?:my|our|his|her|their)) {_ADJ}(?i:{KIN}|{PET})(?: {_NAME})?"
        r" is (?:a|an) [a-z ,-]+[.!]?$"
        rf"|^(?P<who>{_NAME}) is (?:a|an) {_ADJ}(?:{_ROLE_NOUN})\b")),
    ("project", re.compile(
        r"(?i:\b(?:am|'m|is|are|'re|'s) (?:currently |still )?(?:building|developing|working on"
        r"|launching|writing|designing|running)) (?!(?i:it|them|this|that|me|you|us|out|to)\b)"
        r"(?:(?i:a|an|the|my|our|his|her|their) [a-z-]+|[A-Z])")),
    ("ownership", re.compile(
        rf"(?i:\b(?:own|owns)\b) (?:a|an|the|two|three|\d+)\b"
        rf"|(?i:\b(?:have|has)\b) (?:a|an) [a-z ]{{1,30}}(?:called|named) {_LATIN_NAME}")),
    ("ownership", re.compile(r"开了一家|有一(?:辆|套|家|间|台|艘)")),
    ("tool", re.compile(
        r"(?:\b(?i:i|we|he|she|they|team|family)|\b[A-Z][a-z]+)\b(?:\s+|(?='))"
        r"(?i:(?:(?:mostly|mainly|usually|still|now|always|also|all|just) )?"
        r"(?:use|uses|am using|'m using|are using|'re using|is using|(?:have|has|'ve) been using"
        r"|rel(?:y|ies) on|swear by|write in|code in|program in))\b"
        r"(?! (?i:it|them|him|her|you|me|us|this|that|these|those|to)\b)")),
    ("tool", re.compile(
        r"我们?(?:的?(?:团队|公司|家|组|学校))?(?:平时|一直|现在|主要|都|还|也|每天)*"
        r"(?:使用|在用|用)(?![了心力功餐得来户它他她这那])(?=[A-Za-z]|[\u4e00-\u9fff]{2})")),
    ("favourite", re.compile(r"(?i:\bfavou?rite\b)")),
    ("favourite", re.compile(r"最(?:喜欢|爱)的")),
    ("diet", re.compile(
        r"(?i:\b(?:vegetarian|vegan|pescatarian|gluten[- ]free|lactose[- ]intolerant|keto"
        r"|kosher|halal|teetotal(?:er)?|sober)\b"
        r"|\b(?:don't|do not|never|can't|cannot|doesn't|does not) (?:eat|drink)\b)")),
    ("diet", re.compile(r"素食|吃素|(?:不|从不|不能|不太)(?:吃|喝)(?![了过完])")),
    ("age", re.compile(
        r"(?i:\b\d{1,3}(?:-| )years?(?:-| )old\b|\b(?:i'm|i am|is|turned|turning) \d{1,3}"
        r"(?=\s*(?:$|[.,!;]|years?\b|yo\b|and\b|now\b|this\b|next\b|last\b|in\b)))")),
    ("age", re.compile(rf"(?:今年|已经|快|刚满|满|^我){_NUM_ZH}岁|{_NUM_ZH}岁了")),
    ("birthday", re.compile(r"(?i:\bbirthday (?:is|falls)\b|\bborn (?:on|in)\b)")),
    ("birthday", re.compile(r"生日(?:是|在)|出生(?:于|在)")),
)  # fmt: skip


def statement_kind(text: str) -> str | None:
    """What durable fact the sentence states about a person, or None."""
    for kind, frame in FRAMES:
        found = frame.search(text)
        if found is not None and _named_as_person(found):
            return kind
    return None


def _named_as_person(found: re.Match[str]) -> bool:
    """A frame that needs a person's name got one ("I'm Mara", not "I'm Happy")."""
    groups = found.groupdict()
    return all(is_person_name(groups[key]) for key in ("name", "holder", "who") if groups.get(key))


_INSTITUTION = (
    r"University|College|School|Academy|Institute|Hospital|Clinic|Club|Elementary|Society"
    r"|Church|Inc|Ltd|LLC|GmbH|Corp|Company|Group|Labs?|Studios?|Foundation|Bank|Caf[eé]"
)
# "Slack for chat and Jira for tickets": the list goes on past a short purpose.
_LIST_JOIN = r"(?:\s+for\s+[a-z]+)?(?:\s*,\s*(?:and\s+)?|\s+and\s+)"
_HOLIDAY = (
    r"Christmas|Xmas|Easter|Thanksgiving|Halloween|Hanukkah|Diwali|Ramadan|Eid|Passover"
    r"|Lent|Advent|Pride|New Year(?:'s)?(?: Eve| Day)?"
)
# Names marked by a frame as a tool, pet, group, school or organisation, not a person.
_NOT_PEOPLE = (
    re.compile(
        r"(?i:\b(?:use|uses|using|used|switched to|installed|rely on|relies on|swear by"
        r"|work at|works at|working at|worked at|employed by|hired by|joined|member of"
        r"|part of|study at|studies at|studying at|student at|go to|goes to|went to|attend"
        r"|attends|named|called|own|owns|works? for|worked for|working for|(?:job|position|role"
        r"|internship|offer) (?:at|with|from)|learn|learns|learned|learning|speak|speaks"
        r"|build|builds|building|built|developing|working on|launch|launched|launching|the))"
        rf"\s+(?:(?:the|a|an)\s+)?(?P<name>{_LATIN_NAMES}(?:{_LIST_JOIN}{_LATIN_NAMES})*)"
    ),
    re.compile(r"[\"“《«](?P<name>[^\"”》»]{1,80})[\"”》»]"),
    re.compile(rf"\b(?P<name>{_HOLIDAY})\b"),
    re.compile(rf"(?i:\bfavou?rite\s+(?:[\w-]+\s+){{1,2}}(?:is|are))\s+(?:the\s+)?(?P<name>{_LATIN_NAMES})"),
    re.compile(rf"(?P<name>(?:{_LATIN_NAME}\s+)*(?:{_INSTITUTION})\b(?:\s+(?:of|for)\s+{_LATIN_NAMES})?)"),
    re.compile(rf"(?i:\b{PET}),?\s+(?P<name>{_NAME})\b"),
    re.compile(rf"(?P<name>{_NAME}), (?i:my|our) {_ADJ}(?i:{PET})(?=\s*[,.!?;)]|\s*$)"),
    re.compile(rf"(?P<name>{_LATIN_NAMES})\s+(?i:is (?:a|an|my|our) {_ADJ}{PET})\b"),
)  # fmt: skip
_PERSON_MARK = re.compile(rf"(?i:\b{KIN},?\s+(?:(?:is|was|'s)\s+)?(?:named\s+|called\s+)?)$")


def non_people(text: str) -> set[str]:
    """Capitalised names the sentence marks as something else than a person; a name after a
    kinship word ("my sister named Ines", "a friend called Sam") stays a person."""
    names: set[str] = set()
    for pattern in _NOT_PEOPLE:
        for found in pattern.finditer(text):
            if _PERSON_MARK.search(text[: found.start("name")]):
                continue
            names.update(_prefixes(found["name"]))
    return names


def _prefixes(name: str) -> list[str]:
    """ "Acme Logistics", "Acme" and "Logistics": a participant may be any part of it."""
    words = name.split()
    return [" ".join(words[:n]) for n in range(1, len(words) + 1)] + words


_HAN_NAME_STOP = set(
    "的了是我你他她它们这那在和与也都就很吗呢吧啊呀说住搬去来跟今昨刚已还要会想喜爱"
    "又不没有个把被给对从到叫每一养用做当读学工最上下拿买看写送找带打吃喝玩，。！？、"
)
_HAN_TIME = re.compile(r"明天|明年|明早|明晚|今天|今年|昨天|下周|上周|最近|现在|已经|刚才")
_HAN_PEOPLE = (
    re.compile(rf"{_KIN_ZH}(?:叫|名叫|是)?(?P<name>[\u4e00-\u9fff·]{{2,4}})"),
    re.compile(
        r"(?:^|[，,。！!；;：:\s])(?P<name>[\u4e00-\u9fff·]{2,4})是我(?:的|们的?)?" + _KIN_ZH
    ),
    re.compile(r"^我叫(?P<name>[\u4e00-\u9fff·]{2,4})"),
    re.compile(rf"^(?P<name>[\u4e00-\u9fff·]{{2,4}}?)有(?:一|两|三|几)?(?:个|位){_KIN_ZH}"),
)


def han_people(text: str) -> list[str]:
    """Chinese names a kinship or self-introduction frame marks as people: 我妹妹安娜住在…,
    小王是我的同事, 我叫李明. A name ends before a function or verb character."""
    names: list[str] = []
    for pattern in _HAN_PEOPLE:
        for found in pattern.finditer(text):
            name = _han_name(found["name"])
            if name and not re.fullmatch(_KIN_ZH, name):
                names.append(name)
    return list(dict.fromkeys(names))


def _han_name(run: str) -> str:
    run = _HAN_TIME.split(run, maxsplit=1)[0]
    cut = next((i for i, char in enumerate(run) if char in _HAN_NAME_STOP), len(run))
    return run[:cut] if cut >= 2 else ""


_ZH_LABEL = {"The user": "用户", "The assistant": "助手"}
_POSSESSIVE_START = re.compile(r"^(?:my|our)\s+", re.IGNORECASE)
_POSSESSIVE = re.compile(r"\b(?:my|our)\b", re.IGNORECASE)


def owned_title(title: str, said: str, label: str) -> str:
    """A statement's title names whose it is: "My dog Biscuit is a beagle" → "The user's dog
    Biscuit is a beagle", "Priya is my manager" → "Priya is the user's manager", and a
    Chinese "我…" title → "用户…"."""
    if "我" in title and not title.isascii():
        label = label if not label.isascii() else _ZH_LABEL.get(label, label)
        return re.sub(r"我(?!们)", label, title)
    if not label.isascii() or title.startswith(label):
        return title
    if _POSSESSIVE_START.match(said) and not _POSSESSIVE_START.match(title):
        title = f"{label}'s {title[:1].lower()}{title[1:]}"
    lower = label[:1].lower() + label[1:] if label.startswith("The ") else label
    return _POSSESSIVE.sub(f"{lower}'s", _POSSESSIVE_START.sub(f"{label}'s ", title))
