"""English and Chinese for every text the pages show; plugins add their own keys.

The language is the ``lang`` query parameter (remembered in a cookie), else the cookie,
else the browser's ``Accept-Language``; English when none of them says Chinese.
"""

import re
from collections.abc import Mapping

from markupsafe import Markup, escape
from starlette.requests import Request

LANGUAGES = ("en", "zh")
LANG_COOKIE = "sg_lang"

SHELL_STRINGS: dict[str, dict[str, str]] = {
    "en": {
        "app.title": "StrataGate",
        "nav.chat": "Chat",
        "nav.language": "中文",
        "chat.sessions": "Conversations",
        "chat.new": "New conversation",
        "chat.empty": "No conversations yet.",
        "chat.placeholder": "Type a message…",
        "chat.send": "Send",
        "chat.sending": "Thinking…",
        "chat.you": "You",
        "chat.agent": "Agent",
        "chat.failed": "The turn failed",
        "chat.turns": "{n} turns",
        "chat.turn_one": "1 turn",
        "chat.show_status": "Show memory status rows",
        "chat.hide_status": "Hide memory status rows",
        "chat.more": "Checked but not used",
        "chat.intro": "Start by telling the agent something worth remembering.",
        "chat.warning": "Warning",
        "chat.enter_hint": "Enter sends, Shift+Enter starts a new line",
        "chat.space": "Memory space",
        "chat.space_default": "default",
        "error.title": "Something is wrong",
        "error.back": "Back to the start",
        "error.404": "Not found",
        "error.400": "Bad request",
        "error.403": "Refused",
        "error.409": "Conflict",
        "error.413": "Too large",
        "error.500": "Internal error",
        "error.503": "Memory is unavailable",
    },
    "zh": {
        "app.title": "StrataGate",
        "nav.chat": "对话",
        "nav.language": "English",
        "chat.sessions": "对话列表",
        "chat.new": "新对话",
        "chat.empty": "还没有对话。",
        "chat.placeholder": "输入消息…",
        "chat.send": "发送",
        "chat.sending": "思考中…",
        "chat.you": "你",
        "chat.agent": "助手",
        "chat.failed": "这一轮失败了",
        "chat.turns": "{n} 轮",
        "chat.turn_one": "1 轮",
        "chat.show_status": "显示记忆状态行",
        "chat.hide_status": "隐藏记忆状态行",
        "chat.more": "已检查但未采用",
        "chat.intro": "先告诉助手一件值得记住的事。",
        "chat.warning": "警告",
        "chat.enter_hint": "Enter 发送，Shift+Enter 换行",
        "chat.space": "记忆空间",
        "chat.space_default": "默认",
        "error.title": "出了点问题",
        "error.back": "回到首页",
        "error.404": "未找到",
        "error.400": "请求有误",
        "error.403": "已拒绝",
        "error.409": "冲突",
        "error.413": "内容过大",
        "error.500": "内部错误",
        "error.503": "记忆暂不可用",
    },
}


class Catalog:
    """All strings of the shell and the registered sections, by language."""

    def __init__(self) -> None:
        self.strings: dict[str, dict[str, str]] = {lang: {} for lang in LANGUAGES}
        self.add(SHELL_STRINGS)

    def add(self, strings: Mapping[str, Mapping[str, str]]) -> None:
        for lang, table in strings.items():
            self.strings.setdefault(lang, {}).update(table)

    def translator(self, lang: str) -> "Translator":
        return Translator(self.strings.get(lang, {}), self.strings["en"])


class Translator:
    """``t("key", n=3)``: the text in this language, else English, else the key itself."""

    def __init__(self, table: Mapping[str, str], fallback: Mapping[str, str]) -> None:
        self.table = table
        self.fallback = fallback

    def value(self, prefix: str, raw: object) -> str:
        """A stored value's label (``prefix.raw``), else the value as stored."""
        key = f"{prefix}.{raw}"
        return self.table.get(key) or self.fallback.get(key) or str(raw)

    def __call__(self, key: str, **values: object) -> str:
        text = self.table.get(key) or self.fallback.get(key) or key
        if any(isinstance(value, Markup) for value in values.values()):
            return Markup(escape(text)).format(**values)  # a <time> inside a sentence
        return text.format(**values) if values else text


def request_language(request: Request) -> str:
    asked = request.query_params.get("lang")
    if asked in LANGUAGES:
        return asked
    remembered = request.cookies.get(LANG_COOKIE)
    if remembered in LANGUAGES:
        return remembered
    accepted = request.headers.get("accept-language", "").lower()
    first = accepted.split(",", 1)[0].strip()
    return "zh" if first.startswith("zh") else "en"


# Plugins' chat notes and the importer's reasons come in English (stored, or the hook
# carries no language); the page translates their fixed phrases, leaving the rest as written.
_NOTE_PHRASES_ZH = [
    (re.compile(r"^memory used: "), "使用的记忆："),
    (re.compile(r"^block sealed: "), "区块已封存："),
    (re.compile(r"^block ready: "), "区块已就绪："),
    (re.compile(r"\bturns? (\d+(?:–\d+)?)\b"), r"第 \1 轮"),
    (re.compile(r"\b(\d+) events?\b"), r"\1 个事件"),
    (re.compile(r"\b(\d+) block levels?\b"), r"\1 个区块层级"),
    (re.compile(r"\b(\d+) messages?\b"), r"\1 条消息"),
    (re.compile(r"\b(\d+) graph nodes?\b"), r"\1 个图谱节点"),
    (re.compile(r"^no overlapping memory$"), "没有重叠的记忆"),
    (re.compile(r"^chosen by the user$"), "由你选择"),
    (re.compile(r"^exact duplicate of existing memory (\S+)$"), r"与已有记忆 \1 完全重复"),
    (
        re.compile(r"^exact duplicate of candidate (\d+) of this import$"),
        r"与本次导入的第 \1 条完全重复",
    ),
]


def translate_note(title: str, lang: str) -> str:
    """A chat note's title in ``lang`` (English is how plugins write it)."""
    if lang != "zh":
        return title
    for pattern, replacement in _NOTE_PHRASES_ZH:
        title = pattern.sub(replacement, title)
    return title
