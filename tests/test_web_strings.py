"""Every ``t("key")`` a template names is a key of the catalog (a typo would show the bare
key to the user); that both languages have every key is in test_i18n_catalogs."""

import re
from pathlib import Path

from test_i18n_catalogs import app_strings

from stratagate_plugin.web.shell.assets import templates_dir

LITERAL_KEY = re.compile(r"""\bt\(\s*["']([a-z0-9_.]+)["']\s*[,)]""")


def test_every_key_a_template_names_exists() -> None:
    known = set(app_strings()["en"])
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
