"""Every text the pages show exists in English and Chinese, and every ``t("key")`` a
template names is a key of the catalog (a typo would show the bare key to the user)."""

import re
from pathlib import Path

from stratagate_plugin.web.memory.section import memory_section
from stratagate_plugin.web.shell.assets import templates_dir
from stratagate_plugin.web.shell.i18n import SHELL_STRINGS, Catalog

LITERAL_KEY = re.compile(r"""\bt\(\s*["']([a-z0-9_.]+)["']\s*[,)]""")


def catalog() -> Catalog:
    found = Catalog()
    found.add(memory_section(host=None, runtime=lambda: None).strings)  # type: ignore[arg-type]
    return found


def test_english_and_chinese_have_the_same_keys() -> None:
    strings = catalog().strings
    assert set(strings["en"]) == set(strings["zh"])
    assert set(SHELL_STRINGS["en"]) == set(SHELL_STRINGS["zh"])
    untranslated = [k for k, v in strings["zh"].items() if v == strings["en"][k] and words(v)]
    assert [k for k in untranslated if k != "app.title"] == []


def words(text: str) -> bool:
    """Whether a text has English words to translate (``{n} / {limit}`` has none)."""
    return bool(re.search(r"[A-Za-z]{2,}", re.sub(r"\{\w+\}", "", text)))


def test_every_key_a_template_names_exists() -> None:
    known = set(catalog().strings["en"])
    missing = {
        f"{path.name}: {key}"
        for path in Path(templates_dir()).rglob("*.html")
        for key in LITERAL_KEY.findall(path.read_text(encoding="utf-8"))
        if key not in known
    }
    assert sorted(missing) == []


def test_the_key_reader_sees_keys() -> None:
    text = """{{ t("mem.a") }} {{ t('chat.b', n=2) }} {{ t(x) }} {{ t("mem.c." ~ k) }}"""
    assert LITERAL_KEY.findall(text) == [
        "mem.a",
        "chat.b",
    ]
