"""Text helpers of the offline model: sentences, speaker labels, content terms, names.

Chinese has no dictionary here: content terms are Han bigrams without function characters.
"""

import re
import unicodedata
from dataclasses import dataclass
from datetime import UTC, datetime

from ...text.temporal.resolve import find_time_expressions
from .roles import EN_TITLES, TITLE

# "Dr. Alvarez": a title's dot ends no sentence
_AFTER_TITLE = "".join(rf"(?<!\b{title}\.)" for title in EN_TITLES)
_SENTENCE_END = re.compile(
    rf"(?<=[.!?…]){_AFTER_TITLE}\s+|(?<=[。！？；])|(?<=[!?;])(?=[\u4e00-\u9fff])|\n+"
)
_SPEAKER = re.compile(r"^\s*(?P<name>[A-Z][\w'.-]*(?: [A-Z][\w'.-]*){0,2}|[\u4e00-\u9fff·]{2,6})"
                      r"\s*[:：]\s+(?=\S)")  # fmt: skip


def word_set(words: str) -> frozenset[str]:
    return frozenset(words.split())


_NOT_SPEAKERS = word_set(
    """Note Noted Update Edit Todo TODO Q A Error Warning PS Understood Done Fixed Summary
    Result Results Status Reminder Answer Question Tip Important Decision Plan Next
    Correction Remember Outcome Cause Confirmed Agreed Sure Okay OK Great Perfect Thanks Got
    Heads"""
)
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9'+#.-]*[A-Za-z0-9+#]|[A-Za-z]")
_HAN_RUN = re.compile(r"[\u4e00-\u9fff]+")
_NAME = re.compile(
    rf"(?<![\w'])((?:{TITLE})?[A-ZÀ-Þ][a-zß-ÿ]{{1,20}}(?:\s[A-ZÀ-Þ][a-zß-ÿ]{{1,20}})?)(?![\w'])"
)
HAN_FUNCTION = "的了是我你他她它们这那在和与也都就很吗呢吧啊呀哦嗯么着过把被给对从到"
HAN_FUNCTION += "又还不没有个一些要能让之其而且"
_HAN_FUNCTION = set(HAN_FUNCTION)
_HAN = re.compile(r"[\u4e00-\u9fff]")
_HAN_BREAK = re.compile(f"[{HAN_FUNCTION}]+")
_CLAUSE_BREAK = re.compile(r"[.,!?;:()\"“”—–…/，。！？；：、]+|\s-\s")
_EPOCH = datetime(2000, 1, 1, tzinfo=UTC)


EN_STOPWORDS = word_set(
    """a about above after again against all also am an and any are aren't as at be because
    been before being below between both but by can can't cannot could couldn't did didn't do
    does doesn't doing don't down during each few for from further get gets got had hadn't has
    hasn't have haven't having he he'd he'll he's her here here's hers herself him himself his
    how how's i i'd i'll i'm i've if in into is isn't it it's its itself just let's like lot
    lots me more most much must my myself no nor not now of off on once only or other ought our
    ours ourselves out over own really same shan't she she'd she'll she's should shouldn't so
    some such than that that's the their theirs them themselves then there there's these they
    they'd they'll they're they've this those through to too under until up very was wasn't we
    we'd we'll we're we've were weren't what what's when when's where where's which while who
    who's whom why why's will with won't would wouldn't you you'd you'll you're you've your
    yours yourself yourselves yeah yes oh hey hi hello thanks thank ok okay great awesome cool
    wow sure gonna wanna kinda lol haha pretty super totally definitely always never still even
    ever one two three thing things stuff something anything everything way time times today
    yesterday tomorrow last next week weekend month year day days ago since back going went
    make made take took feel felt know think thought see saw look want say said tell told
    good nice amazing glad happy love loved lately recently new lot much many well btw been
    since really getting keep kept come came let us sounds sound seems seem hope become
    thinking doing trying tried start started finally actually maybe probably anyway"""
)
_CAPITALISED_NON_NAMES = word_set(
    """I I'm I've I'll I'd The A An And But So Oh Hey Hi Hello Thanks Thank Yes Yeah Wow
    Ok Okay Well Also Just My We Our You Your It It's That This There They He She His Her
    What When Where Why How Who Which Monday Tuesday Wednesday Thursday Friday Saturday
    Sunday Mondays Tuesdays Wednesdays Thursdays Fridays Saturdays Sundays
    January February March April May June July August September October November
    December Great Awesome Congrats Sorry Sure Cool Nice Good God Guess Plus BTW Lol Haha
    Check Can Could Would Will Do Did Does Have Had Let If Not No In On At For With From
    Last Next Since After Before Mom Dad Mum"""
)


@dataclass(frozen=True)
class Sentence:
    """One sentence of one message, with its speaker and message identity."""

    text: str
    message_id: str
    role: str
    speaker: str | None
    created_at: str
    index: int


def split_speaker(content: str) -> tuple[str | None, str]:
    """``"Caroline: I went …"`` → ``("Caroline", "I went …")``; no label → ``(None, content)``."""
    match = _SPEAKER.match(content)
    if match is None or not is_person_name(match["name"]):
        return None, content
    return match["name"], content[match.end() :]


def is_latin(name: str) -> bool:
    """Written without Han characters ("Tomás" is Latin though not ASCII)."""
    return _HAN.search(name) is None


def is_person_name(name: str) -> bool:
    """Not a label word ("Noted", "Update"), weekday, month or other capitalised word, nor
    a bare title ("Dr") or a name joined by "of" / "for" (an organisation's or a place's)."""
    words = name.split()
    if name.rstrip(".") in EN_TITLES or _JOINERS.intersection(words):
        return False
    return name not in _NOT_SPEAKERS and not any(
        word in _CAPITALISED_NON_NAMES or word in _NOT_SPEAKERS for word in words
    )


_JOINERS = frozenset({"of", "for", "the", "and", "&"})


def split_sentences(text: str) -> list[str]:
    pieces = (piece.strip() for piece in _SENTENCE_END.split(text))
    return [piece for piece in pieces if piece]


def clean(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).split())


def content_terms(text: str) -> list[str]:
    """Lower-case English content words and Han bigrams free of function characters."""
    words = [word.lower() for word in _WORD.findall(text)]
    terms = [word for word in words if len(word) > 2 and word not in EN_STOPWORDS]
    for run in _HAN_RUN.findall(text):
        pairs = (run[i : i + 2] for i in range(len(run) - 1))
        terms.extend(pair for pair in pairs if not set(pair) & _HAN_FUNCTION)
    return terms


def surface_forms(text: str) -> dict[str, str]:
    """Lower-case term → its first spelling in ``text`` (keeps ``LGBTQ``, ``Paris``)."""
    forms: dict[str, str] = {}
    for word in _WORD.findall(text):
        forms.setdefault(word.lower(), word)
    return forms


def proper_names(text: str) -> list[str]:
    """Capitalised words that are not the first word of a sentence nor common words."""
    names: list[str] = []
    for sentence in split_sentences(text):
        for match in _NAME.finditer(sentence):
            first_word = match.start() == len(sentence) - len(sentence.lstrip())
            first_word = first_word and match.group(1).split()[0].rstrip(".") not in EN_TITLES
            name = match.group(1)
            if not first_word and is_person_name(name):
                names.append(name)
    return list(dict.fromkeys(names))


def is_question(sentence: str) -> bool:
    return sentence.rstrip().endswith(("?", "？", "吗", "呢"))


def clip(text: str, limit: int) -> str:
    """Cut at a word boundary and add an ellipsis when longer than ``limit``."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    if " " in cut and not _HAN_RUN.search(cut[-10:]):
        cut = cut.rsplit(" ", 1)[0]
    return cut.rstrip(" ,;:-—") + "…"


def without_times(text: str) -> str:
    """The text with its time expressions cut out (they make poor titles and tags)."""
    for found in reversed(find_time_expressions(text, _EPOCH)):
        end = found.position + len(found.original_text)
        text = text[: found.position] + " " + text[end:]
    return text


def phrases(text: str) -> list[str]:
    """Runs of English content words within a clause, and Han runs cut at function characters."""
    phrases: list[str] = []
    for clause in _CLAUSE_BREAK.split(text):
        run: list[str] = []
        for word in [*clause.split(), ""]:
            if word and _is_content_word(word):
                run.append(word.strip("'"))
                continue
            phrases.extend(_runs(run))
            run = []
    for han in _HAN_RUN.findall(text):
        phrases.extend(p for p in _HAN_BREAK.split(han) if 2 <= len(p) <= 6)
    return phrases


def _is_content_word(word: str) -> bool:
    bare = word.lower().strip("'")
    return bare not in EN_STOPWORDS and bool(content_terms(bare)) and not _HAN.search(word)


def _runs(words: list[str]) -> list[str]:
    return [" ".join(words[i : i + 3]) for i in range(0, len(words), 3) if words[i : i + 3]]
