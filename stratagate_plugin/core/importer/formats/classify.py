"""Which §11.1 category a converted memory belongs to, by fixed word rules (EN and ZH).

Other systems do not sort memories into instruction / identity / career / project /
preference, so a converter guesses from two clues: the source's own grouping (a Markdown
heading, a Letta block label, an MCP entity type, a mem0 category), then the memory's
words. The guess only orders the preview and picks the default tags; the user sees every
candidate before anything is written. A memory about the user that no rule claims is
``identity``: what it says is still something about who they are.
"""

import re

CATEGORY_ORDER = ("instruction", "identity", "career", "project", "preference")

HINT_WORDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("instruction", ("instruction", "guideline", "rule", "指令", "指示", "规则", "要求")),
    (
        "preference",
        ("prefer", "like", "interest", "hobb", "style", "taste", "food", "偏好", "喜好", "兴趣"),
    ),
    ("project", ("project", "task", "goal", "plan", "top of mind", "项目", "任务", "计划")),
    (
        "career",
        ("work", "career", "job", "profession", "occupation", "organi", "company", "工作", "职业"),
    ),
)
"""Substrings of a lower-cased hint, tried in this order (``user_preferences`` → preference).
No hint names ``identity``: "Personal context", a ``human`` block or a ``person`` entity
holds preferences and jobs too, so there the memory's own words decide, and ``identity`` is
what is left."""

TEXT_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "instruction",
        re.compile(
            r"^(always|never|please|don't|do not|avoid|respond|reply|answer|call (me|the user))\b"
            r"|\b(wants|asks|expects) (you|the assistant|responses|answers|replies)\b"
            r"|^(请|不要|别|总是|始终|永远|回答|回复)|希望(你|助手)",
            re.IGNORECASE,
        ),
    ),
    (
        "preference",
        re.compile(
            r"\b(prefers?|preferred|likes?|loves?|enjoys?|dislikes?|hates?|favou?rite|"
            r"interests?|interested in|hobb(y|ies))\b|喜欢|偏好|爱好|兴趣|讨厌|最爱|偏爱",
            re.IGNORECASE,
        ),
    ),
    (
        "project",
        re.compile(
            r"\b(projects?|working on|building|deadline|roadmap|launch(es|ing)?|plans? to|"
            r"planning to|migrat(e|es|ing|ion)|maintains?)\b|项目|正在做|计划|截止|迁移",
            re.IGNORECASE,
        ),
    ),
    (
        "career",
        re.compile(
            r"\b(works?|worked|job|employ(ed|er|ee)|occupation|profession(al)?|career|"
            r"engineer|developer|manager|designer|researcher|student|colleague|company)\b"
            r"|工作|就职|公司|职业|工程师|学生|同事|上班",
            re.IGNORECASE,
        ),
    ),
)


def category_from_hint(hint: str) -> str | None:
    """The category a source's own grouping names, if any rule recognises it."""
    lowered = hint.lower()
    for category, words in HINT_WORDS:
        if any(word in lowered for word in words):
            return category
    return None


def category_for(text: str, hint: str = "") -> str:
    """The hint's category, else the first text rule that matches, else ``identity``."""
    if hint and (named := category_from_hint(hint)):
        return named
    for category, pattern in TEXT_RULES:
        if pattern.search(text):
            return category
    return "identity"
