"""Hypothesis strategies for the fuzz targets: random values, and near-misses of valid input.

Purely random values mostly fail the first check an entrance makes; near-misses (the right
keys with wrong values, valid JSON one mutation away, real time words in random order) reach
the code behind it. Text includes lone surrogates, which JSON escapes (``"\\ud800"``) and
non-UTF-8 command-line bytes produce.
"""

import json
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import yaml
from hypothesis import strategies as st

ANY_CHAR = st.one_of(st.characters(), st.characters(categories=["Cs"]))
TEXT = st.one_of(st.text(ANY_CHAR, max_size=40), st.sampled_from(["", " ", "\x00", "\ufffd"]))
SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True), TEXT,
    st.integers(min_value=-(2**70), max_value=2**70),
)  # fmt: skip
JSON = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=5), st.dictionaries(TEXT, inner, max_size=5)),
    max_leaves=12,
)
SMALL = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=2), max_leaves=3)


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


DEEP = st.integers(min_value=1, max_value=5000).map(nested)


TRACE = st.fixed_dictionaries({"name": TEXT}, optional={"arguments": SMALL, "result": SMALL})
ENTRY = st.fixed_dictionaries(
    {
        "thread": st.one_of(st.sampled_from(["t1", "t2"]), TEXT),
        "role": st.sampled_from(["user", "user", "user", "assistant", "tool", "system"]),
        "content": TEXT,
        "at": st.datetimes(timezones=st.just(UTC)).map(lambda d: d.isoformat()),
    },
    optional={"tool_calls": st.lists(TRACE, max_size=2)},
)
BAD_TIMES = st.sampled_from(["2025-13-01", "yesterday", "0001-01-01T00:00:00Z", "", "99999"])


def corrupted(entries: list[Any], where: int, key: str, value: Any, how: int) -> Any:
    """``entries`` as they are (half the time), or one entry with one field replaced,
    removed or joined by an unknown one."""
    if not entries or how % 2 == 0:
        return entries
    entry = entries[where % len(entries)]
    if how == 1:
        entry[key] = value
    elif how == 3:
        entry.pop(key, None)
    else:
        entry[f"x-{key}"] = value
    return entries


INGEST = st.one_of(
    st.builds(
        corrupted,
        st.lists(ENTRY, max_size=6),
        st.integers(0, 5),
        st.sampled_from(["thread", "role", "content", "at", "tool_calls"]),
        st.one_of(SMALL, BAD_TIMES),
        st.integers(0, 5),
    ),
    JSON,
)

LINE = st.fixed_dictionaries(
    {"speaker": st.one_of(st.sampled_from(["Ann", "Bob"]), SMALL),
     "text": st.one_of(TEXT, SMALL), "dia_id": st.one_of(st.sampled_from(["D1:1", "D1:2"]), SMALL)},
    optional={"blip_caption": SMALL},
)  # fmt: skip
CONVERSATION = st.fixed_dictionaries(
    {"speaker_a": st.one_of(st.just("Ann"), SMALL),
     "session_1": st.one_of(st.lists(LINE, max_size=3), SMALL)},
    optional={"speaker_b": SMALL, "session_1_date_time": st.one_of(
                  st.just("1:56 pm on 8 May, 2023"), TEXT, SMALL),
              "session_2": st.one_of(st.lists(LINE, max_size=2), SMALL)},
)  # fmt: skip
LOCOMO = st.lists(
    st.fixed_dictionaries({"conversation": CONVERSATION}, optional={"sample_id": SMALL}),
    min_size=1,
    max_size=2,
)


def json_bytes(value: Any) -> bytes:
    """``value`` as a JSON file: lone surrogates become ``\\udXXX`` escapes, as in the wild."""
    return json.dumps(value).encode()


SUMMARY = st.fixed_dictionaries(
    {"title": TEXT, "summary": TEXT},
    optional={"tags": st.lists(TEXT, max_size=3), "keypoints": st.lists(TEXT, max_size=3),
              "should_extract": st.one_of(st.booleans(), JSON)},
)  # fmt: skip
CARD = st.fixed_dictionaries(
    {"title": TEXT, "summary": TEXT, "source_message_ids": st.lists(TEXT, max_size=2),
     "scope": st.one_of(st.sampled_from(["user", "project", "session"]), JSON)},
    optional={"temporal": JSON, "tags": JSON, "criticality": JSON},
)  # fmt: skip
EXTRACTION = st.fixed_dictionaries(
    {"should_extract": st.one_of(st.booleans(), JSON)},
    optional={"events": st.one_of(st.lists(CARD, max_size=2), JSON)},
)
ANSWER = st.one_of(SUMMARY, EXTRACTION, JSON)


def mutated(text: str, at: int, insert: str) -> str:
    """``text`` with ``insert`` put at ``at`` (mod its length): valid JSON made invalid."""
    cut = at % (len(text) + 1)
    return text[:cut] + insert + text[cut:]


JSON_TEXT = st.one_of(
    ANSWER.map(lambda value: json.dumps(value)),
    st.builds(mutated, ANSWER.map(json.dumps), st.integers(0, 400), TEXT),
    TEXT,
    DEEP,
)
ARGUMENTS = st.one_of(JSON_TEXT, ANSWER, JSON)
TOOL_CALL = st.one_of(
    st.fixed_dictionaries({"id": JSON, "type": st.just("function"),
                           "function": st.one_of(st.fixed_dictionaries(
                               {"name": st.one_of(TEXT, JSON), "arguments": ARGUMENTS}), JSON)}),
    JSON,
)  # fmt: skip
CONTENT = st.one_of(
    JSON_TEXT,
    JSON_TEXT.map(lambda text: f"```json\n{text}\n```"),
    JSON_TEXT.map(lambda text: f"<think>{text}</think>{text}"),
    st.lists(st.fixed_dictionaries({"type": st.just("text"), "text": JSON_TEXT}), max_size=2),
    JSON,
)
MESSAGE = st.one_of(
    st.fixed_dictionaries(
        {"role": st.one_of(st.just("assistant"), JSON)},
        optional={"content": CONTENT, "tool_calls": st.one_of(st.lists(TOOL_CALL, max_size=2),
                  JSON), "function_call": st.one_of(TOOL_CALL, JSON),
                  "reasoning_content": JSON},
    ),
    JSON,
)  # fmt: skip
STRUCTURED = st.tuples(st.sampled_from(["summarize_block", "extract_event_cards"]), MESSAGE)

ENVELOPE = st.one_of(
    st.builds(lambda m, f: {"choices": [{"message": m, "finish_reason": f}]}, MESSAGE, JSON),
    st.builds(lambda c: {"choices": c}, JSON),
    JSON,
)
BODY = st.one_of(
    ENVELOPE.map(lambda value: json.dumps(value).encode()),
    st.builds(mutated, ENVELOPE.map(json.dumps), st.integers(0, 400), TEXT).map(
        lambda text: text.encode("utf-8", "surrogatepass")
    ),
    st.binary(max_size=60),
    DEEP.map(str.encode),
)
STATUS = st.sampled_from([200] * 8 + [400, 401, 404, 429, 500, 503])
CHAT = st.tuples(STATUS, BODY)

MODEL = st.fixed_dictionaries(
    {"base_url": st.one_of(st.just("http://127.0.0.1:9/v1"), TEXT),
     "model": st.one_of(st.just("m"), TEXT)},
    optional={"timeout_s": st.one_of(st.floats(), SMALL), "temperature": SMALL,
              "api_key_env": st.one_of(st.just("KEY"), SMALL), "extra": SMALL},
)  # fmt: skip
PROFILE_VALUE = st.fixed_dictionaries(
    {},
    optional={"plugins": st.one_of(st.lists(st.one_of(st.just("stratagate-memory"), TEXT),
                                            max_size=2), SMALL),
              "settings": st.one_of(st.dictionaries(TEXT, st.dictionaries(TEXT, SMALL,
                                                                          max_size=2),
                                                    max_size=2), SMALL),
              "model": st.one_of(MODEL, SMALL),
              "system_prompt": st.one_of(TEXT, SMALL),
              "name": TEXT},
)  # fmt: skip
YAML_SNIPPETS = st.sampled_from(
    ["a: 2001-13-45", "!!python/object:os.system x", "&a [*a]", "? [a, b]\n: c", "- - -",
     "plugins: !!binary aGk=", "model: {base_url: x", "\t", "%YAML 9.9\n---", "x: *nope",
     "settings: {a: 1}", "model: null", "plugins: [a, a]", "...", "key: 1e999"]
)  # fmt: skip


def _safe_dump(value: Any) -> bytes:
    try:
        return yaml.safe_dump(value, allow_unicode=True).encode("utf-8", "surrogatepass")
    except yaml.YAMLError:
        return b"{}"


PROFILE = st.one_of(
    PROFILE_VALUE.map(_safe_dump),
    st.lists(st.one_of(YAML_SNIPPETS, TEXT), max_size=4).map(
        lambda parts: "\n".join(parts).encode("utf-8", "surrogatepass")
    ),
    st.binary(max_size=80),
)

_TIME_WORDS = (
    "yesterday today tomorrow last next this week weekend month year summer winter ago few "
    "several days weeks months the other day before over Friday Tues Monday May December "
    "2023 2022 8 31 0 99999 3 twenty a in on of, 2023-05-08 2023-13-45 9999-12-31 0000-01-01 "
    "昨天 前天 上周 本周 下周 上周五 下周一 周末 上个月 去年 去年夏天 几天前 3天前 十天前 "
    "2023年5月8日 5月 月 日 年 天前 号"
)
TIME_WORDS = st.sampled_from(_TIME_WORDS.split())
TIME_TEXT = st.one_of(
    st.lists(st.one_of(TIME_WORDS, TEXT), max_size=8).map(" ".join),
    st.lists(TIME_WORDS, max_size=6).map("".join),
    TEXT,
)
ZONES = st.sampled_from([UTC, timezone(timedelta(hours=14)), timezone(timedelta(hours=-12))])
EDGES = st.sampled_from([datetime.min, datetime.max, datetime(1, 1, 7), datetime(9999, 12, 25)])
REFERENCE = st.one_of(
    st.datetimes(datetime(1970, 1, 1), datetime(2100, 1, 1), timezones=ZONES),
    st.datetimes(timezones=ZONES),
    st.builds(lambda edge, zone: edge.replace(tzinfo=zone), EDGES, ZONES),
)
TEMPORAL = st.tuples(TIME_TEXT, REFERENCE)
INGEST_FILE = st.one_of(
    INGEST.map(json_bytes),
    LOCOMO.map(json_bytes),
    st.builds(mutated, INGEST.map(json.dumps), st.integers(0, 400), TEXT).map(
        lambda text: text.encode("utf-8", "surrogatepass")
    ),
    DEEP.map(str.encode),
    st.binary(max_size=60),
)
