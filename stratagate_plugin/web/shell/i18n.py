"""English and Chinese for every text the pages show; plugins add their own keys.

The texts live in message catalogs, one flat JSON file per language (``locales/en.json``,
``locales/zh.json``) beside the package that shows them, so a translator edits data, not
Python; a plugin's ``WebSection.catalogs`` names its own directory of them.

The language is the ``lang`` query parameter (remembered in a cookie), else the cookie,
else the browser's ``Accept-Language``; English when none of them says Chinese.
"""

import json
import re
from collections.abc import Mapping
from importlib.resources import files
from importlib.resources.abc import Traversable

from markupsafe import Markup, escape
from starlette.requests import Request

LANGUAGES = ("en", "zh")
LANG_COOKIE = "sg_lang"
_READ: dict[str, dict[str, dict[str, str]]] = {}


def read_catalogs(directory: Traversable) -> Mapping[str, Mapping[str, str]]:
    """Every ``<lang>.json`` in ``directory``, read once per process (apps are built per
    test and per server; the files do not change under a running one)."""
    key = str(directory)
    if key not in _READ:
        _READ[key] = {
            entry.name.removesuffix(".json"): _read_catalog(entry)
            for entry in sorted(directory.iterdir(), key=lambda entry: entry.name)
            if entry.name.endswith(".json")
        }
    return _READ[key]


def _read_catalog(entry: Traversable) -> dict[str, str]:
    """One language's texts; a translator's slip names the file instead of a traceback."""
    try:
        texts = json.loads(entry.read_text(encoding="utf-8"))
    except ValueError as error:
        raise ValueError(f"{entry}: not valid JSON ({error})") from None
    if not isinstance(texts, dict) or not all(isinstance(v, str) for v in texts.values()):
        raise ValueError(f"{entry}: must be one JSON object of key -> text")
    return texts


class Catalog:
    """All strings of the shell and the registered sections, by language."""

    def __init__(self) -> None:
        self.strings: dict[str, dict[str, str]] = {lang: {} for lang in LANGUAGES}
        self.add(read_catalogs(files(__package__ or __name__) / "locales"))

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
        if not values:  # most calls: a label, once per row of a page
            return text
        for value in values.values():
            if isinstance(value, Markup):
                return Markup(escape(text)).format(**values)  # a <time> inside a sentence
        return text.format(**values)


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
