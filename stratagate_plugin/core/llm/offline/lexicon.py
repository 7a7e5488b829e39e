"""Cue lexicons of the offline model (English and Chinese): event types, scope, criticality.

``EVENT_CUES`` is ordered: the first matching type names the event.
"""

import re

from .roles import HAN_TITLES


def _cue(english: str, chinese: str = "") -> re.Pattern[str]:
    parts = [rf"\b(?:{english})\b"] + ([chinese] if chinese else [])
    return re.compile("|".join(parts), re.IGNORECASE)


EVENT_CUES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("cancellation", _cue(
        r"cancel(?:l?ed|l?ing|s)?|call(?:ed|ing)? off|no longer|gave up|give up on|scrapped"
        r"|postponed|won't be (?:going|coming|doing)|not going to (?:go|do|make it)|any ?more"
        r"|(?:not|n't) (?:\w+ ){1,5}?after all|(?:is|are|'s|'re) off\b|dropped|quit",
        r"取消|不去了|放弃|作罢|推迟|不再|已经不|不[办做搞买租去来]了|戒[\u4e00-\u9fff]?了|戒掉")),
    ("change", _cue(
        r"switch(?:ed|ing)? (?:to|over)|chang(?:ed|ing) (?:to|my|our|the)|moved to|moving to"
        r"|replaced|instead of|upgraded|now prefer|transitioned|relocated to|now (?:lives?|works?)",
        r"改成|改为|改到|换成|换到|搬到|搬家|改用|转到")),
    ("migration", _cue(r"migrat(?:ed|ing|ion)", r"迁移")),
    ("decision", _cue(
        r"decided|decide to|decision|chose|choos(?:e|ing) to|settled on|made up (?:my|our) mind"
        r"|going with|agreed to|we agreed|committed to|determined to",
        r"决定|选择了|定了|敲定|确定了|同意了")),
    ("plan", _cue(
        r"plan(?:s|ned|ning)? (?:to|on)|going to|gonna|will|i'll|we'll|intend(?:s|ing)? to"
        r"|hoping to|about to|aim(?:ing)? to|thinking (?:about|of) \w+ing|looking forward to"
        r"|can't wait to|signed up|next (?:week|month|year|weekend)|tomorrow",
        r"打算|计划|准备|将要|要去|想去|明天|下周|下个月|明年|报名")),
    ("release", _cue(
        r"released|launch(?:ed|ing)|shipped|published|deployed|went live|is (?:now )?open"
        r"|opened|opening night",
        r"发布|上线|推出|开业|开张")),
    ("task_completed", _cue(
        r"finished|completed|done with|passed|graduated|got accepted|was accepted|achieved"
        r"|won|fixed|solved|got (?:a|my|the) (?:degree|job|offer|medal|promotion)",
        r"完成|做完|通过了|毕业|搞定|录取")),
    ("meeting", _cue(
        r"met (?:with|up)|meet(?:ing)? (?:with|up)|meeting|conference|convention|interview"
        r"|appointment|council",
        r"会议|见面|面试|开会|约了|聚会")),
    ("incident", _cue(
        r"accident|injur(?:ed|y)|got hurt|broke|crash(?:ed)?|outage|flood(?:ed)?|fire|lost my",
        r"受伤|事故|车祸|坏了|丢了|洪水")),
    ("collaboration", _cue(r"collaborat\w*|team(?:ed)? up|together with|partner(?:ed)? with",
                           r"合作|一起")),
    ("other", _cue(
        r"(?:i|we)(?:'ve| have)? (?:just |finally |also |recently |actually |already )?"
        r"(?:went|got|had|took|ran|made|bought|met|saw|visited|attended|joined|started|began"
        r"|tried|found|lost|read|wrote|painted|drew|adopted|applied|signed|received|gave|did"
        r"|spent|hosted|volunteered|celebrated|learned|learnt|left|came|built|created|became"
        r"|quit|travel+ed|flew|drove|hiked|camped|moved|been to|(?!need|feed|proceed)[a-z]+ed)",
        r"(?:我|我们)[^，。！？,.!?]{0,24}?(?:了|过)")),
)  # fmt: skip

PREFERENCE = _cue(
    r"i (?:really |absolutely |just |totally |kinda |now |still |also |actually )?(?:love|like"
    r"|prefer|hate|enjoy|adore"
    r"|dislike|can't stand)|my (?:all-time )?favou?rite|favou?rite|i'm (?:a (?:big |huge )?fan of"
    r"|into|passionate about)|i'd rather",
    r"喜欢|热爱|讨厌|偏好|最爱|更爱|不爱|受不了",
)
IDENTITY = _cue(
    r"my name is|i'm called|call me|i work (?:as|at|for)|i live in|i grew up in|i'm from"
    r"|i was born|years old|my (?:job|hometown|home country)|i'm an? (?:\w+ ){0,2}(?:engineer"
    r"|teacher|student|developer|doctor|nurse|designer|artist|manager|counselor|writer|banker"
    r"|dancer|parent|mom|dad|mother|father|firefighter|lawyer)|i moved (?:here )?from"
    r"|(?:i|we) (?:run|own|manage) (?:a|an|the|my|our)\b",
    r"我叫|我的名字|我是一名|我是个|我在\w{1,10}工作|我住在|我来自|我出生|我的老家|我的家乡",
)
SAFETY = _cue(r"allergic|allergy|medication|diagnosed|emergency|password|never share",
              r"过敏|药物|密码|急诊")  # fmt: skip
FIRST_PERSON = _cue(r"i|i'm|i've|i'd|i'll|me|my|mine|we|we're|we've|our|us", r"我")
PROJECT_SCOPE = _cue(
    r"this project|the project|our project|the repo|this repo|codebase|the team|our team"
    r"|coding style|convention|in this code",
    r"项目|代码库|仓库|团队规范",
)
LONG_TERM = _cue(r"always|from now on|in (?:the )?future|going forward|every time|never"
                 r"|remind me|remember (?:that|this)|keep in mind",
                 r"以后都|总是|永远|每次|从现在起")  # fmt: skip
SESSION_SCOPE = _cue(r"for now|this time|right now|just this once|for today|in this chat"
                     r"|this session|can you|could you|please",
                     r"这次|先这样|暂时|本次|请你|帮我")  # fmt: skip
# Standing states and habits: where someone lives or works, what they do every day.
STANDING = _cue(
    r"(?:lives?|living) in|based in|(?:works?|working) (?:as|at|for)|every (?:day|morning"
    r"|evening|night|week|weekend|monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
    r"|each (?:day|morning|evening|week)|usually|on weekdays|on weekends"
    r"|on (?:mondays|tuesdays|wednesdays|thursdays|fridays|saturdays|sundays)"
    r"|(?:once|twice|\w+ times|a \w+) a (?:day|week|month|year)",
    r"住在|每天|每周|每个?星期|每晚|每个?月|经常|通常|在[\u4e00-\u9fff]{1,6}工作(?!室)"
    r"|当[\u4e00-\u9fff]{1,4}[员师]",
)
# A feeling is an evaluation, not a standing fact, however often it is felt.
FEELING = _cue(
    r"thrilled|excited|happy|glad|grateful|thankful|proud|stoked|pumped|sad|worried|nervous"
    r"|scared|anxious|upset|frustrated|bored|tired of",
    r"兴奋|开心|高兴|激动|感激|骄傲|难过|担心|紧张|害怕|焦虑|沮丧",
)
# What a standing statement is about, so a move meets where someone lived before.
STATE_FRAMES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("residence", _cue(r"(?:lives?|living|lived|based|settled) in|mov(?:e|ed|ing) (?:back )?to"
                       r"|relocat(?:e|ed|ing) to", r"住在|搬到|搬去|搬回|定居")),
    ("work", _cue(r"(?:works?|working|worked|employed) (?:as|at|for)|(?:started|took|got|landed"
                  r"|began) (?:a |his |her |my |their |a new )?(?:job|position|role) (?:as|at|with)"
                  r"|joined",
                  r"在[\u4e00-\u9fff]{1,6}工作(?!室)|当[\u4e00-\u9fff]{1,4}[员师]|入职|跳槽到")),
)  # fmt: skip
ONGOING = _cue(r"currently|at the moment|these days|(?:i'm|we're|i am|we are)"
               r" (?:still |also |now )?(?!going\b|gonna\b|so\b|really\b)\w+ing\b",
               r"正在|目前|最近在|这些天")  # fmt: skip
JUST_NOW = _cue(
    r"(?:i|we|i've|we've) just \w+|just \w+ed|this morning|this afternoon|earlier today"
    r"|(?:is|are) (?:now )?(?:open|live|out|official)",
    r"刚刚|刚才|刚|(?:开张|开业|上线|正式开放)了",
)
ELIDED_SUBJECT = re.compile(
    r"^(?:(?:just|also|finally|recently|then)\s+)?(?:[A-Z][a-z]+(?:ed|ing)|Went|Got|Had|Took|Made"
    r"|Ran|Bought|Met|Saw|Lost|Found|Left|Came|Spent|Did|Gave|Began|Wrote|Read|Built)\b"
)
DISCOURSE = re.compile(
    r"^(?:(?:hey|hi|hello|oh|ah|so|well|wow|yeah|yes|btw|by the way|anyway|also|and|but"
    r"|guess what|you know what|thanks|thank you|haha|lol|woohoo|yay|omg|actually|in fact)\b[^\w]*"
    r"(?:[A-Z][a-z]+[!,.]\s*)?)+|^(?:嘿|嗨|哦|哇|对了|顺便说一句|另外|其实)[，,！!]?",
    re.IGNORECASE,
)
HONORIFIC_NAME = re.compile(rf"[\u4e00-\u9fff]{{1,3}}?(?:{'|'.join(HAN_TITLES)})")

ACKNOWLEDGEMENT = re.compile(
    r"^(?:(?:noted|understood|got it|ok(?:ay)?|sure|great|done|perfect|thanks|thank you"
    r"|you're welcome|anytime|no problem|of course|will do|sounds good|alright|right|yes|cool"
    r"|good|nice|certainly|absolutely|roger)\b[\s,.:;!—-]*)+"
    r"|^(?:好的|好|收到|明白|了解|没问题|不客气|知道了|行|嗯)[\s，,。.:：！!]*",
    re.IGNORECASE,
)
ASSISTANT_FINDING = _cue(
    r"root cause|caused by|because|turned out|the (?:problem|issue|bug) (?:was|is)"
    r"|fails? (?:when|if)"
    r"|(?:does not|doesn't|cannot|can't|won't) (?:support|work|handle|accept)|not supported"
    r"|limit(?:ed)? (?:is|of|to)|at most|maximum|infeasible|not possible|lesson",
    r"根因|原因是|因为|不支持|无法|限制|上限|最多|不可行|教训",
)
REQUEST = _cue(r"please|can you|could you|would you|help me", r"请|帮我|麻烦")
RULE = _cue(r"always|never|must|from now on|going forward|make sure to|by default|remind me"
            r"|remember (?:that|this)|keep in mind",
            r"以后都|以后|必须|一律|统一|总是|永远不要|记住")  # fmt: skip
# Moving something to another time or place: a change only with a time or a home to go to
# ("pushed the launch to May", "moved to Lisbon"), not "it pushed me to start my business".
RESCHEDULE = _cue(
    r"mov(?:e|ed|ing)\b[^.!?]{0,40}?\b(?:to|until)|(?:reschedul(?:e|ed)|postponed?"
    r"|push(?:ed)?(?: back)?|delay(?:ed)?|bump(?:ed)?) (?:\w+ ){0,4}?(?:to|until)",
    r"调到|调整到|挪到|改在",
)
# A cancelling verb under a negation cancels nothing: "I'm not gonna give up on my dreams".
NEGATED_CANCEL = _cue(
    r"(?:not|never|n't|won't|can't)\s+(?:\w+\s+){0,2}?(?:cancel\w*|call\w* off|give up"
    r"|gave up|scrap\w*|postpone\w*)",
    r"(?<!不得)(?:不会|不要|不想|没有|永不|[不没别])再?(?:取消|放弃)",
)
REPLACEMENT = _cue(
    r"(?:changed?|switch(?:ed)?) (?:\w+ ){0,4}?(?:to|until)|instead"
    r"|no longer|replaced|correction|not \w+ (?:any more|anymore)|switch(?:ed|ing)"
    r"|now prefer|changed (?:my|our) minds?|rather than|i meant|scratch that|brought forward"
    r"|any ?more|relocated to|now (?:lives?|living|works?|working|based) (?:in|at|as|for)",
    r"改为|改成|改到|换成|换到|不再|已经不|推迟到|延期到|提前到|改期|现在更喜欢|现在更爱|现在改|改喝"
    r"|改用|更正|纠正|说错了|而是|搬到|搬去|现在(?:住在|在[\u4e00-\u9fff]{1,6}工作(?!室))",
)
# "Actually …" corrects only when it restates a matching event with another time.
CORRECTION_HINT = _cue(r"actually|in fact|as it turns out|turns out", r"其实|实际上|事实上")
# The verb of a preference, so "I now prefer calls" meets "I prefer email".
PREFERENCE_FRAME = re.compile(
    r"\b(prefer|rather|like|love|enjoy|adore|hate|dislike|favou?rite)|(喜欢|偏好|热爱|最爱|讨厌)",
    re.IGNORECASE,
)
CANCELLATION = _cue(
    r"cancel(?:l?ed|l?ing|s)?|call(?:ed|ing)? off|scrapped|(?:not|n't) (?:\w+ ){1,5}?after all"
    r"|(?:is|are|'s|'re) off\b",
    r"取消|作罢|不[办做搞]了",
)
# "to" after a verb of speaking, giving or marrying points to a person ("married to Tom");
# "in" / "at" after it still point to a place ("getting married in Dublin").
PLACE_CUE = re.compile(
    r"\b(?:(?<!\btalk )(?<!\btalked )(?<!\bspoke )(?<!\bsent )(?<!\bgave )(?<!\bwrote )"
    r"(?<!\bsaid )(?<!\btold )(?<!\bmarried )(?<!\bintroduced )(?<!\blistened )to"
    r"|in|at|from|near|around|across|visit(?:ed|ing)?)\s+(?:the\s+)?$",
    re.IGNORECASE,
)
