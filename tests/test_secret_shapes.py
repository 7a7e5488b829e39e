"""Every documented key shape is redacted whatever script touches it (issue 24).

The old patterns began with ``\\b``; Han, Cyrillic or Arabic letters are word characters,
so ``密钥是sk-proj-…`` had no boundary before the key and it showed on every page. Keys
are planted here in English and Chinese sentences and, by Hypothesis, glued to random text
of every script; the secret must go and text holding no secret must come back unchanged.
"""

import json
import sqlite3
import string
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.fault_parts.r24_secrets import rows
from stratagate_plugin.core.config import MemoryConfig
from stratagate_plugin.core.llm.base import ScriptedModel
from stratagate_plugin.core.memory import StrataGate
from stratagate_plugin.core.profile.fields import clean_value
from stratagate_plugin.core.text.secrets import REDACTED, redact_secrets, redact_value

ALNUM = string.ascii_letters + string.digits
UPPER = string.ascii_uppercase + string.digits


def body(alphabet: str, size: int) -> st.SearchStrategy[str]:
    return st.text(alphabet=alphabet, min_size=size, max_size=size + 12)


# shape -> (prefix, body strategy, suffix maker): the planted key is prefix + body (+ more).
SHAPES: dict[str, st.SearchStrategy[str]] = {
    "openai": st.builds("sk-{}".format, body(ALNUM + "_-", 20)),
    "openai_project": st.builds("sk-proj-{}".format, body(ALNUM + "_-", 20)),
    "anthropic": st.builds("sk-ant-api03-{}".format, body(ALNUM + "_-", 20)),
    "stripe": st.builds("sk_live_{}".format, body(ALNUM, 24)),
    "github": st.builds("{}_{}".format, st.sampled_from(["ghp", "gho", "ghs"]), body(ALNUM, 36)),
    "github_pat": st.builds("github_pat_{}".format, body(ALNUM + "_", 40)),
    "gitlab": st.builds("glpat-{}".format, body(ALNUM + "_-", 20)),
    "huggingface": st.builds("hf_{}".format, body(ALNUM, 34)),
    "npm": st.builds("npm_{}".format, body(ALNUM, 36)),
    "groq": st.builds("gsk_{}".format, body(ALNUM, 40)),
    "xai": st.builds("xai-{}".format, body(ALNUM, 40)),
    "slack": st.builds("xoxb-{}-{}".format, body(string.digits, 12), body(ALNUM, 24)),
    "aws": st.builds("AKIA{}".format, body(UPPER, 16).map(lambda text: text[:16])),
    "google": st.builds("AIza{}".format, body(ALNUM + "_-", 35).map(lambda text: text[:35])),
    "google_oauth": st.builds("ya29.{}".format, body(ALNUM + "_-", 30)),
    "jwt": st.builds(
        "eyJ{}.{}.{}".format, body(ALNUM, 16), body(ALNUM + "_-", 16), body(ALNUM + "_-", 16)
    ),
}
KEY_ALPHABET = set(ALNUM + "_-")
SCRIPTS = (
    string.ascii_letters + " .,!?'",  # Latin
    "我的密钥是请记住这个令牌用于测试。，、：；！？「」",  # CJK and its punctuation
    "ひらがなカタカナ한국어",  # kana, Hangul
    "привет ключ пароль Ёё",  # Cyrillic
    "مرحبا المفتاح كلمة",  # Arabic
    "😀🔑🚀✨👍🏽",  # emoji
    string.digits + string.punctuation.replace("@", "").replace(":", "") + " \n\t",
)
SCRIPT_TEXT = st.lists(
    st.sampled_from(SCRIPTS).flatmap(lambda alphabet: st.text(alphabet=alphabet, max_size=12)),
    max_size=5,
).map("".join)
FUZZ = settings(max_examples=300, derandomize=True, deadline=None)


@pytest.mark.parametrize(
    "text, secret",
    [
        ("我的OpenAI密钥是sk-proj-ZZZZYYYYXXXXWWWW9999，请记住", "ZZZZYYYYXXXXWWWW9999"),
        ("My OpenAI key is sk-proj-ZZZZYYYYXXXXWWWW9999, remember it", "ZZZZYYYYXXXXWWWW9999"),
        ("密钥sk-ant-api03-abcdEFGH1234ijklMNOP。", "abcdEFGH1234ijklMNOP"),
        ("令牌ghp_abcdefghijklmnopqrstuvwxyz0123456789好的", "abcdefghijklmnopqrstuvwxyz"),
        ("访问密钥AKIAIOSFODNN7EXAMPLE和别的", "IOSFODNN7EXAMPLE"),
        ("谷歌AIzaSyA1234567890abcdefghijklmnopqrstuv用", "SyA1234567890abcdefghij"),
        ("ключsk-abcdefghijklmnop1234ключ", "abcdefghijklmnop1234"),
        ("المفتاحxoxb-123456789012-abcdefghijkl", "123456789012-abcdefghijkl"),
        ("🔑eyJhbGciOiJIUzI1.eyJzdWIiOiIxMjM0.SflKxwRJSMeKKF2QT4", "SflKxwRJSMeKKF2QT4"),
        ("密码：hunter2hunter2，谢谢", "hunter2hunter2"),
        ("我的DB_PASSWORD=s3cr3tPassw0rd。", "s3cr3tPassw0rd"),
        ("AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI"),
        ("代理https://alice:Tr0ub4dor3xyz@proxy.example.com:8080用", "Tr0ub4dor3xyz"),
        ("proxy https://alice:Tr0ub4dor3xyz@proxy.example.com:8080 ok", "Tr0ub4dor3xyz"),
        ("redis://:p4ss-w0rd!@cache:6379/0", "p4ss-w0rd!"),
        (
            "-----BEGIN PGP PRIVATE KEY BLOCK-----\nlQOYBF\n-----END PGP PRIVATE KEY BLOCK-----",
            "lQOYBF",
        ),
    ],
)
def test_a_key_in_english_or_chinese_text_is_redacted(text: str, secret: str) -> None:
    cleaned = redact_secrets(text)
    assert secret not in cleaned and REDACTED in cleaned, cleaned
    assert redact_secrets(cleaned) == cleaned  # stable: redacting twice changes nothing


def test_the_text_around_a_key_and_a_url_user_stay() -> None:
    assert redact_secrets("我的OpenAI密钥是sk-proj-ZZZZYYYYXXXXWWWW9999，请记住") == (
        f"我的OpenAI密钥是{REDACTED}，请记住"
    )
    assert redact_secrets("https://alice:Tr0ub4dor3xyz@proxy.example.com:8080/x") == (
        f"https://alice:{REDACTED}@proxy.example.com:8080/x"
    )
    assert redact_value({"a": ["令牌ghp_" + "x" * 36]}) == {"a": [f"令牌{REDACTED}"]}


@pytest.mark.parametrize(
    "text",
    [
        "task-force-unit-alpha-bravo-charlie",  # "sk-" inside a longer token
        "the cupbearer extraordinary",
        "xoxo-hugs-and-kisses-forever",
        "http://example.com:8080/path and mailto:alice@example.com",
        "今天的密码学课讲了令牌桶算法",
        "记住：家里的无线网密码是lotus2024。",
        "Remember that my password is hunter22.",
        "the token: is a word here",
        "my_ghp_notes and AKIA in a sentence",
    ],
)
def test_ordinary_text_is_unchanged(text: str) -> None:
    assert redact_secrets(text) == text


@FUZZ
@given(
    shape=st.sampled_from(sorted(SHAPES)).flatmap(SHAPES.get),
    before=SCRIPT_TEXT,
    after=SCRIPT_TEXT,
    glue=st.sampled_from(["", " ", "：", "是", "\n", "😀", "«", "("]),
)
def test_a_key_of_every_shape_never_survives_next_to_any_script(
    shape: str, before: str, after: str, glue: str
) -> None:
    if before[-1:] in KEY_ALPHABET and not glue:
        glue = "，"  # glued to a Latin word or digit the key would be part of a longer token
    text = before + glue + shape + after
    cleaned = redact_secrets(text)
    assert shape not in cleaned and REDACTED in cleaned, (text, cleaned)
    tail = shape[-12:]  # the secret's end cannot survive either (no key cut in the middle)
    assert tail not in cleaned or tail in before + after, (text, cleaned)


@FUZZ
@given(text=SCRIPT_TEXT, user=st.text(alphabet=ALNUM, min_size=1, max_size=8))
def test_a_url_password_never_survives_next_to_any_script(text: str, user: str) -> None:
    password = "Pw" + user + "!x9Qz"
    cleaned = redact_secrets(f"{text}https://{user}:{password}@host.example:8080/{text}")
    assert password not in cleaned, cleaned
    assert f"https://{user}:" in cleaned  # the user may stay


@FUZZ
@given(text=SCRIPT_TEXT)
def test_text_of_every_script_without_a_secret_is_unchanged(text: str) -> None:
    assert redact_secrets(text) == text


def test_a_key_put_in_the_profile_is_stored_redacted() -> None:
    value = clean_value("response_preferences", "部署用ghp_" + "Q7" * 18 + "令牌")
    assert value == f"部署用{REDACTED}令牌"


async def test_an_export_holds_no_key_even_from_a_card_stored_unredacted(tmp_path: Path) -> None:
    key = "sk-proj-ZZZZYYYYXXXXWWWW9999"
    summary = {"title": "t", "tags": [], "summary": "s", "keypoints": [], "should_extract": True}
    model = ScriptedModel.of([summary])
    async with await StrataGate.open(
        tmp_path / "m.db", MemoryConfig(block_turn_size=1), model
    ) as memory:
        receipt = await memory.blocks.append_turn("ns", "t", user="hello", assistant="ok")
        card = {"title": "Greeting", "summary": "The user said hello.", "tags": ["greeting"]}
        card |= {"quotes": ["hello"], "scope": "user"}
        card["source_message_ids"] = [receipt.message_ids[0]]
        model.push({"should_extract": True, "events": [card]})
        await memory.derivation.process_pending()
        with sqlite3.connect(tmp_path / "m.db") as raw:  # as a card stored before the fix
            raw.execute("UPDATE events SET summary = ?", (f"密钥是{key}",))
        document = await memory.imports.export_space("ns", include_profile=True)
    text = json.dumps(document, ensure_ascii=False)
    assert key not in text and f"密钥是{REDACTED}" in text


def test_the_key_after_cjk_row_finds_no_page_showing_a_secret(tmp_path: Path) -> None:
    [row] = rows(tmp_path)
    assert row.acknowledged == 2 and (row.fuzz_cases or 0) > 50
    assert row.crashes == 0 and row.tracebacks == 0, row.details


LABEL_PIECES = [
    *("password", "PassWord", "passwd", "pwd", "token", "Token", "api_key", "API-KEY", "apikey"),
    *("access_key", "secret", "secret_access_key", "private-key", "bearer ", "Bearer", "xbearer"),
    *("密码", "密钥", "口令", "令牌", "：", ":", "=", '"', "'", " ", "\n", "<p>", "，谢谢"),
    *("abcdefgh12345678", "hunter2hunter2", REDACTED, "tokens", "accessecret", "é"),
    *("\u0130", "\u0131", "\u017f", "\u212a"),  # letters (?i) matches to ASCII ones
]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(LABEL_PIECES), min_size=1, max_size=14))
def test_label_scan_redacts_as_the_pattern_does(pieces: list[str]) -> None:
    """The labelled values are tried only where a label word starts (pages are long): the
    result is exactly the pattern's own substitution over the whole text."""
    from stratagate_plugin.core.text import secrets

    text = "".join(pieces)
    whole = secrets._LABELLED.sub(lambda found: found.group(1) + REDACTED, text)
    assert secrets._redact_labelled(text) == whole


VALUE_PIECES = [
    *LABEL_PIECES,
    *("sk-", "sk-proj-abcdefghijklmnop1234", "ghp_", "AKIA", "AKIAABCDEFGHIJKLMNOP", "xox"),
    *("https://user:hunter2hunter2@host", "://", "node-1", "Alice", "Σ", "ΣΣ"),
]
JSON_LIKE = st.recursive(
    st.lists(st.sampled_from(VALUE_PIECES), max_size=4).map("".join) | st.integers() | st.none(),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.lists(inner, max_size=3).map(tuple)
        | st.dictionaries(st.sampled_from(["id", "label", "token", "sk-key"]), inner, max_size=3)
    ),
    max_leaves=12,
)


def each_string_redacted(value: object) -> object:
    """What ``redact_value`` did before it checked a value's strings together."""
    if isinstance(value, str):
        return redact_secrets(value)
    if isinstance(value, list | tuple):
        return [each_string_redacted(item) for item in value]
    if isinstance(value, dict):
        return {key: each_string_redacted(item) for key, item in value.items()}
    return value


@settings(max_examples=500, deadline=None)
@given(JSON_LIKE)
def test_value_redaction_checked_together_equals_each_string_redacted(value: object) -> None:
    """A JSON answer's strings are checked for a secret's start together, and scanned one
    by one only when one may hold it: the result is the same as redacting every string."""
    assert redact_value(value) == each_string_redacted(value)


TOKEN_PIECES = [
    *("sk-", "sk_", "task_completed", "ask-", "_", "-", " ", "a", "9", "密钥是", "\n"),
    *("sk_live_" + "a1" * 8, "sk-proj-" + "b2" * 8, "xoxb-1234567890ab", "ghp_" + "c3" * 10),
    *("-----BEGIN RSA PRIVATE KEY-----", "-----END RSA PRIVATE KEY-----", "eyJ", "AKIA"),
    *("AKIAABCDEFGHIJKLMNOP", "https://hooks.slack.com/services/", "T0/B0/" + "X" * 24),
    *("https://user:hunter2hunter2@host", "password=", "hunter2hunter2", REDACTED),
]


@settings(max_examples=600, deadline=None)
@given(st.lists(st.sampled_from(TOKEN_PIECES), min_size=1, max_size=12))
def test_token_scan_skipped_only_where_no_key_can_begin(pieces: list[str]) -> None:
    """The key scan runs only where a key's first letters stand where a key may begin
    (``task_completed`` holds ``sk_`` inside a word): the result is the three patterns'
    own substitutions over the whole text."""
    from stratagate_plugin.core.text import secrets

    text = "".join(pieces)
    whole = secrets._TOKENS.sub(REDACTED, text)
    whole = secrets._URL_PASSWORD.sub(secrets._url_password, whole)
    whole = secrets._LABELLED.sub(lambda found: found.group(1) + REDACTED, whole)
    assert redact_secrets(text) == whole


def test_a_slack_webhook_alone_is_redacted() -> None:
    """Its first letters were missing from the starts the scan looks for first."""
    hook = "https://hooks.slack.com/services/T00000000/B00000000/" + "X" * 24
    assert redact_secrets(f"the hook is {hook} ok") == f"the hook is {REDACTED} ok"
