"""The UI texts live in message catalogs, one JSON file per language per package
(``web/shell/locales``, ``web/memory/locales``), not in Python dicts. Their union is the
snapshot taken before the texts moved (no text lost or changed by the move), both languages
have every key, and a plugin's own catalog directory reaches the app."""

import ast
import json
import re
from pathlib import Path
from typing import Any

import pytest

import stratagate_plugin.web as web_package
from stratagate_plugin.core.events.cards import EVENT_TYPES
from stratagate_plugin.core.profile.fields import FIELDS
from stratagate_plugin.harness.chat import EchoChatModel
from stratagate_plugin.harness.hookspecs import hookimpl
from stratagate_plugin.harness.pm import make_plugin_manager
from stratagate_plugin.harness.profiles import Profile
from stratagate_plugin.harness.runtime import Host
from stratagate_plugin.harness.types import WebSection
from stratagate_plugin.web.memory.section import memory_section
from stratagate_plugin.web.shell.app import build_app
from stratagate_plugin.web.shell.i18n import Catalog, read_catalogs

SNAPSHOT = Path(__file__).parent / "samples" / "ui-strings.json"
WEB = Path(web_package.__file__).parent
CATALOG_DIRS = sorted(WEB.glob("**/locales"))


def app_strings() -> dict[str, dict[str, str]]:
    """The shell's texts and the memory section's, joined as ``build_app`` joins them."""
    catalog = Catalog()
    section = memory_section(host=None, runtime=lambda: None)  # type: ignore[arg-type]
    catalog.add(section.strings)
    if section.catalogs is not None:
        catalog.add(read_catalogs(section.catalogs))
    return catalog.strings


def catalog_files_union() -> dict[str, dict[str, str]]:
    joined: dict[str, dict[str, str]] = {}
    for directory in CATALOG_DIRS:
        for path in sorted(directory.glob("*.json")):
            table = joined.setdefault(path.stem, {})
            texts = json.loads(path.read_text(encoding="utf-8"))
            assert not set(table) & set(texts), f"{path}: a key another package has"
            table.update(texts)
    return joined


def snapshot() -> Any:
    return json.loads(SNAPSHOT.read_text(encoding="utf-8"))


def test_the_catalog_files_hold_every_text_of_the_snapshot_byte_for_byte() -> None:
    assert [d.relative_to(WEB).as_posix() for d in CATALOG_DIRS] == [
        "memory/locales",
        "shell/locales",
    ]
    assert catalog_files_union() == snapshot()


def test_the_app_shows_the_snapshot_texts() -> None:
    assert app_strings() == snapshot()


@pytest.mark.parametrize("directory", CATALOG_DIRS, ids=lambda d: d.parent.name)
def test_each_catalog_is_flat_sorted_utf8_json_with_both_languages(directory: Path) -> None:
    english = json.loads((directory / "en.json").read_text(encoding="utf-8"))
    chinese = json.loads((directory / "zh.json").read_text(encoding="utf-8"))
    assert set(english) == set(chinese)
    for path in (directory / "en.json", directory / "zh.json"):
        texts = json.loads(path.read_text(encoding="utf-8"))
        canonical = json.dumps(texts, ensure_ascii=False, indent=2, sort_keys=True) + "\n"
        assert path.read_text(encoding="utf-8") == canonical, f"{path}: rewrite it sorted"


def test_no_python_module_of_the_web_app_holds_a_language_table() -> None:
    """A ``{"en": {...}, "zh": {...}}`` literal is a catalog that escaped the JSON files
    (a navigation link's ``{"en": "Memory", "zh": "记忆"}`` label is not a table)."""
    tables = [
        f"{path.relative_to(WEB)}:{node.lineno}"
        for path in sorted(WEB.rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Dict) and _is_language_table(node)
    ]
    assert tables == []


def _is_language_table(node: ast.Dict) -> bool:
    keys = {key.value for key in node.keys if isinstance(key, ast.Constant)}
    return {"en", "zh"} <= keys and any(isinstance(v, ast.Dict) for v in node.values)


def test_english_and_chinese_have_the_same_keys_and_chinese_is_translated() -> None:
    strings = app_strings()
    assert set(strings["en"]) == set(strings["zh"])
    untranslated = [k for k, v in strings["zh"].items() if v == strings["en"][k] and words(v)]
    assert [k for k in untranslated if k != "app.title"] == []


def words(text: str) -> bool:
    """Whether a text has English words to translate (``{n} / {limit}`` has none)."""
    return bool(re.search(r"[A-Za-z]{2,}", re.sub(r"\{\w+\}", "", text)))


def test_every_event_type_and_profile_field_has_its_texts_in_both_languages() -> None:
    """These keys were generated from ``EVENT_TYPES`` and ``FIELDS``; a new type or field
    needs its catalog lines."""
    names = [f"mem.events.type.{kind}" for kind in EVENT_TYPES]
    names += [f"mem.profile.{what}.{f.name}" for f in FIELDS for what in ("field", "hint")]
    strings = app_strings()
    for lang in ("en", "zh"):
        assert [name for name in names if name not in strings[lang]] == [], lang


def test_a_broken_catalog_names_its_file(tmp_path: Path) -> None:
    (tmp_path / "en.json").write_text('{"a.b": "x",}', encoding="utf-8")
    with pytest.raises(ValueError, match=r"en\.json: not valid JSON") as raised:
        read_catalogs(tmp_path)
    assert "\n" not in str(raised.value)
    (tmp_path / "en.json").write_text('{"a.b": ["x"]}', encoding="utf-8")
    with pytest.raises(ValueError, match=r"en\.json: must be one JSON object of key -> text"):
        read_catalogs(tmp_path / ".")  # another path: read afresh


class CatalogPlugin:
    """A plugin whose texts are a directory of catalogs."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    @hookimpl
    def register_web(self, register: Any) -> None:
        register(WebSection(id="demo", path="/demo", routes=[], catalogs=self.directory))


async def test_a_plugin_adds_its_keys_through_a_catalog_directory(tmp_path: Path) -> None:
    locales = tmp_path / "locales"
    locales.mkdir()
    (locales / "en.json").write_text('{"demo.hello": "Hello"}', encoding="utf-8")
    (locales / "zh.json").write_text('{"demo.hello": "你好"}', encoding="utf-8")
    plugins = make_plugin_manager([("demo", CatalogPlugin(locales))])
    host = Host(plugins, Profile(name="t"), cwd=tmp_path)
    await host.start()
    try:
        catalog = (await build_app(host, EchoChatModel())).state.web.catalog
    finally:
        await host.stop()
    assert catalog.translator("zh")("demo.hello") == "你好"
    assert catalog.translator("en")("demo.hello") == "Hello"
    assert catalog.translator("zh")("chat.send") == "发送"  # the shell's own, still there


if __name__ == "__main__":  # after a deliberate change of a text: rewrite the snapshot
    body = json.dumps(app_strings(), ensure_ascii=False, indent=1, sort_keys=True) + "\n"
    SNAPSHOT.write_text(body, encoding="utf-8")
