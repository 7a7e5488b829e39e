"""The UI texts: every key and text of both languages, as the app assembles them, equals the
snapshot taken before the texts moved from Python dicts to the JSON catalogs (no text lost
or changed by the move)."""

import json
from pathlib import Path

from stratagate_plugin.web.memory.section import memory_section
from stratagate_plugin.web.shell.i18n import Catalog

SNAPSHOT = Path(__file__).parent / "samples" / "ui-strings.json"


def app_strings() -> dict[str, dict[str, str]]:
    """The shell's texts and the memory section's, joined as ``build_app`` joins them."""
    catalog = Catalog()
    catalog.add(memory_section(host=None, runtime=lambda: None).strings)  # type: ignore[arg-type]
    return {lang: dict(sorted(table.items())) for lang, table in catalog.strings.items()}


def dump(strings: dict[str, dict[str, str]]) -> str:
    return json.dumps(strings, ensure_ascii=False, indent=1, sort_keys=True) + "\n"


def test_the_app_shows_the_snapshot_texts_byte_for_byte() -> None:
    assert app_strings() == json.loads(SNAPSHOT.read_text(encoding="utf-8"))


if __name__ == "__main__":  # the snapshot, written once before the move
    SNAPSHOT.write_text(dump(app_strings()), encoding="utf-8")
