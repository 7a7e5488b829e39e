"""The U+FFFD rule: text that cannot be stored as UTF-8 is marked, never dropped."""

from hypothesis import given
from hypothesis import strategies as st

from stratagate_plugin.core.text.clean import valid_bytes, valid_json_value, valid_text


def test_lone_surrogates_become_replacement_characters() -> None:
    assert valid_text("a\ud800b") == "a\ufffdb"
    assert valid_text("caf\udce9") == "caf\ufffd"  # a surrogateescape'd CLI byte


def test_nul_becomes_a_replacement_character_as_postgresql_cannot_store_it() -> None:
    assert valid_text("gate\x00code 4471") == "gate\ufffdcode 4471"
    assert valid_text("\x00\u5496\ud800") == "\ufffd\u5496\ufffd"
    assert valid_json_value({"k\x00": ["\x00"]}) == {"k\ufffd": ["\ufffd"]}


def test_valid_text_is_unchanged() -> None:
    assert valid_text("café 咖啡 😀") == "café 咖啡 😀"


def test_invalid_bytes_are_replaced_and_counted() -> None:
    assert valid_bytes("ok \ufffd".encode()) == ("ok \ufffd", 0)
    assert valid_bytes(b"caf\xe9 \xff") == ("caf\ufffd \ufffd", 2)


def test_json_values_are_cleaned_all_the_way_down() -> None:
    value = {"k\ud800": ["x\udfff", {"y": "\ud83d"}], "n": 3}
    assert valid_json_value(value) == {"k\ufffd": ["x\ufffd", {"y": "\ufffd"}], "n": 3}


@given(st.text())
def test_every_string_becomes_encodable(text: str) -> None:
    cleaned = valid_text(text)
    cleaned.encode("utf-8")
    assert len(cleaned) == len(text)
