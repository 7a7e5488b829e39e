"""Relation frames read clause by clause (issue 26): a verb of a small closed class, a few
words of its own clause, then the object, typed by the class (and by its shape).

``graph_frames.PLACES_AND_WORK`` holds the tight frames ("lives in X", "works at X"); these
add what indirect phrasing puts between the verb and the object ("studies law at Leiden
University", "lives round the corner from me in Glasgow"), the possessive home ("her flat in
Brixton"), the relative head ("the company I work for, Tidewater Analytics"), passives and
admissions ("got into X", "被复旦大学录取", "考上了北京大学"), membership by playing in a
group, and the Chinese 是…的学生 / 从…来 / 算…的员工 / 跟…认识 structures. The gap never
crosses a clause break, so the object stays in the verb's clause.
"""

import re

from .gazetteer import HAN_PLACES
from .roles import HAN_RUN, PERSON_NAME, alternation, proper_name

_NAME = proper_name(4, ampersand=True)
_GAZETTEER = alternation(HAN_PLACES)
_GAP = r"[^.,;:!?()\"]{0,40}?"  # words of the same clause
_HAN_PLACE = rf"{_GAZETTEER}|[\u4e00-\u9fff]{{1,4}}?[市省县州国岛镇村]"  # a place by name or shape
_SCHOOL = r"(?:\s(?:University|College|School|Academy|Institute|Primary|High|Polytechnic)\b)"

# (relation, target type, fact key or None, patterns): the shape graph_frames reads
VERB_FRAMES: tuple[tuple[str, str, str | None, tuple[re.Pattern[str], ...]], ...] = (
    ("lives_in", "place", "lives_in", (
        re.compile(rf"\b(?:lives?|living|(?:has|have|'ve)\s+lived|settled)\b{_GAP}\b(?:in)\s+(?P<x>{_NAME})"),
        re.compile(rf"\b(?:[Mm]y|[Oo]ur|[Hh]is|[Hh]er)\s+(?:new\s+|little\s+|tiny\s+|old\s+)?"
                   rf"(?:flat|house|apartment|place|home|condo|cottage|farm|villa|bungalow|cabin|loft)\s+in\s+(?P<x>{_NAME})"),
    )),
    ("works_at", "organization", "works_at", (
        re.compile(rf"\b(?:work(?:s|ed|ing)?(?!\s+out)|teach(?:es|ing)?|taught|intern(?:s|ed|ing)?)\b{_GAP}"
                   rf"\b(?:at|for)\s+(?:the\s+)?"
                   rf"(?P<x>{_NAME})"),
        re.compile(rf"\b(?:job|internship|position|placement|role)\s+(?:at|with)\s+(?:the\s+)?"
                   rf"(?P<x>{_NAME})"),
        re.compile(rf"\b(?:company|firm|agency|studio|startup|organi[sz]ation|place)\s+(?:I|we)\s+"
                   rf"work\s+(?:for|at)\s*,\s*(?P<x>{_NAME})"),
        re.compile(rf"(?:是|算|当)(?P<x>{HAN_RUN}?)的(?:正式)?(?:员工|职员|雇员)"),
        re.compile(rf"在(?P<x>{HAN_RUN}?|{_NAME})(?:做)?兼职"),
    )),
    ("studies_at", "organization", "studies_at", (
        re.compile(rf"\bstud(?:y|ies|ied|ying)\b{_GAP}\bat\s+(?:the\s+)?"
                   rf"(?P<x>[A-ZÀ-Þ][A-Za-zÀ-ÿ'-]*(?:\s[A-ZÀ-Þ][A-Za-zÀ-ÿ'-]*){{0,3}}{_SCHOOL})"),
        re.compile(rf"\b(?:got into|admitted to|accepted (?:at|to|into)|enrolled (?:at|in))\s+"
                   rf"(?:the\s+)?(?P<x>{_NAME})"),
        re.compile(rf"\b(?:started|starting|starts|start)\s+(?:school\s+)?at\s+(?:the\s+)?"
                   rf"(?P<x>[A-Z][A-Za-z'-]*(?:\s[A-Z][A-Za-z'-]*){{0,3}}{_SCHOOL})"),
        re.compile(r"被(?P<x>[\u4e00-\u9fff]{2,8}?(?:大学|学院|中学|小学|学校))录取"),
        re.compile(r"(?:考上了?|考进了?|进了)(?P<x>(?:(?![的了])[\u4e00-\u9fff]){2,6}?"
                   r"(?:大学|学院|中学|小学|学校|幼儿园))"),
        re.compile(rf"是(?P<x>{HAN_RUN}?)的(?:学生|研究生|本科生|博士生)"),
    )),
    ("from", "place", "from", (
        re.compile(rf"从(?P<x>{HAN_RUN}?)来的"),
        # where someone was raised: "born and raised in Ohio", "grew up outside Dublin"
        re.compile(rf"\b(?:born\s+and\s+raised|raised|brought\s+up|grew\s+up)\b{_GAP}"
                   rf"\b(?:in|near|outside|around)\s+(?P<x>{_NAME})"),
        # "moved here from Brazil" (not "moved from Porto to Lisbon": a former home)
        re.compile(rf"\b(?:moved|came|emigrated|immigrated|relocated)\s+(?:here\s+|over\s+)?"
                   rf"from\s+(?P<x>{_NAME})(?![\w'.&-]|\s+[A-Z]|\s+to\b)"),
        re.compile(rf"\b[Bb]ack\s+home\s+in\s+(?P<x>{_NAME})"),
        re.compile(rf"在(?P<x>{_HAN_PLACE})长大"),  # 我是在成都长大的
        re.compile(rf"(?<=是)(?P<x>{_HAN_PLACE})人(?=[，。！？,.!?；]|$)"),  # 我是四川人
    )),
    ("visited", "place", None, (
        re.compile(rf"\b(?:[Tt]ook|[Hh]ad|[Ww]ent on|[Mm]ade)\s+(?:a|an|our|my|that|the)\s+"
                   rf"(?:[\w-]+\s+){{0,3}}?(?:trip|vacation|holiday|getaway)\s+(?:[a-z]+\s+){{0,3}}?(?:to|in)\s+(?:the\s+)?"
                   rf"(?P<x>{_NAME})"),
        re.compile(rf"去(?P<x>{HAN_RUN}?)(?:的那次|那次)(?:旅行|旅游|度假)"),
        re.compile(rf"去(?P<x>{HAN_RUN}?)(?:短途)?(?:旅行|旅游|度假)了"),
        re.compile(rf"去(?P<x>{_GAZETTEER})了(?=[!！。，,]|$)"),  # 去登山了 is an outing
        re.compile(rf"\b(?:drove|travell?ed|backpacked|cycled|toured|roamed)\s+(?:around|through|"
                   rf"across)\s+(?P<x>{_NAME})"),
        # back from a trip: "just got back from Lisbon", 刚从东京回来
        re.compile(rf"\b(?:got|came|coming|getting|flew|just|returned)\s+(?:back|home)\s+from\s+"
                   rf"(?:(?:a|my|our|the)\s+(?:[\w-]+\s+){{0,2}}?(?:trip|vacation|holiday)\s+(?:to|in)\s+)?"
                   rf"(?P<x>{_NAME})"),
        re.compile(rf"从(?P<x>{_HAN_PLACE})(?:旅游|旅行|度假|玩)?回来"),
        # a photo taken there, a trip taken to it: "took this pic in Spain", 在冰岛拍的
        re.compile(rf"\b(?:took|snapped|shot)\s+(?:a|this|that|the|these|those)\s+(?:[a-z]+\s+)?"
                   rf"(?:pics?|pictures?|photos?|shots?|selfies?)\s+(?:in|at)\s+(?:the\s+)?(?P<x>{_NAME})"),
        re.compile(rf"在(?P<x>{_HAN_PLACE})拍(?:的|了|下)"),
        re.compile(rf"\b(?:trip|vacation|holiday|getaway)\s+(?:we|I)\s+(?:had|took|made)\s+(?:to|in)\s+"
                   rf"(?P<x>{_NAME})"),
        re.compile(rf"在(?P<x>{_HAN_PLACE})(?:玩了|旅游了|旅行了|度假了)"),
        re.compile(rf"\b(?:spent|stayed)\s+(?:the|last|this|our|my|a)\s+(?:[a-z]+\s+)?"
                   rf"(?:weekend|summer|winter|spring|holidays?|vacation|week|month)\s+in\s+(?P<x>{_NAME})"),
        re.compile(rf"\bwent\s+(?:camping|hiking|skiing|snowboarding|surfing|sightseeing|backpacking"
                   rf"|fishing|diving|snorkell?ing|kayaking|climbing|trekking|sailing)\s+"
                   rf"(?:at|in|on|around|near)\s+(?:the\s+)?(?P<x>{_NAME})"),
        re.compile(rf"\b(?:drove|flew|went|headed|travell?ed)\s+(?:up|down|over|out|back)\s+to\s+"
                   rf"(?P<x>{_NAME})"),
        re.compile(rf"\b(?:stayed|spent)\s+(?:a|an|two|three|four|five|six|\d+|a few)\s+"
                   rf"(?:days?|nights?|weeks?|months?)\s+in\s+(?P<x>{_NAME})"),
    )),
    ("uses", "tool", None, (
        re.compile(rf"\b(?:switched|switching|moved|migrated|changed)\s+(?:\w+\s+)?from\s+{_NAME}"
                   rf"\s+to\s+(?P<x>{_NAME})"),
    )),
    ("member_of", "organization", None, (
        # volunteering: "I volunteer at the Riverside Food Bank", 我在红十字会做志愿者
        re.compile(rf"\bvolunteer(?:s|ed|ing)?\s+(?:at|with|for)\s+(?:the\s+)?(?P<x>{_NAME})"),
        re.compile(rf"在(?P<x>[\u4e00-\u9fff]{{3,7}}会|{_NAME})(?:做|当)(?:志愿者|义工)"),
        re.compile(rf"\b(?:'m|am|is|are|was|were|became|become)\s+(?:an?\s+(?:active\s+)?)?part\s+of\s+"
                   rf"(?:the\s+)?(?P<x>{_NAME})"),
        re.compile(rf"\b(?:plays?|played|playing|sings?|sang|singing|dances?|danced|rows?|rowed)\b"
                   rf"{_GAP}\b(?:in|for|with)\s+(?:the\s+)?(?P<x>{_NAME})"),
    )),
    ("knows", "person", None, (
        re.compile(rf"\b(?:met|meet|meeting|talked (?:to|with)|chatted with|spoke (?:to|with)|"
                   rf"conversation with|got to know)\s+(?:(?:this|a|an|one)\s+(?:[a-z]+\s+){{0,3}}?"
                   rf"[a-z]+|someone|somebody)\s*(?:,\s*|\s+(?:named|called)\s+)(?P<x>{PERSON_NAME})\b"),
        re.compile(rf"(?:跟|和|与)(?P<x>{HAN_RUN}?)(?:是)?(?:在[^，。,！？]{{1,12}})?认识的"),
        re.compile(rf"(?:跟|和|与)(?:一个|一位)(?:名)?叫(?P<x>{HAN_RUN}?)的[\u4e00-\u9fff]{{0,3}}?"
                   rf"(?:聊|认识|交谈|谈|见面)"),
    )),
)  # fmt: skip
