"""Secret-looking tokens never reach derived views (L0–L2, event cards); L5 keeps them."""

from pathlib import Path

import pytest

from stratagate_plugin.core.config import MemoryConfig
from stratagate_plugin.core.llm.base import ScriptedModel
from stratagate_plugin.core.memory import StrataGate
from stratagate_plugin.core.text.secrets import REDACTED, redact_secrets

KEY = "sk-proj-4fTq9ZxW2mLp8RvB7nKc3JdH"


@pytest.mark.parametrize(
    "text",
    [
        f"use {KEY} for the staging box",
        "token: ghp_abcdefghijklmnopqrstuvwxyz0123",
        "password=correct-horse-battery",
        'api_key: "abcd1234efgh5678"',
        "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9abcdefghijkl",
        "AKIAIOSFODNN7EXAMPLE is the id",
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----",
    ],
)
def test_secret_looking_tokens_are_redacted(text: str) -> None:
    cleaned = redact_secrets(text)
    assert REDACTED in cleaned
    assert redact_secrets(cleaned) == cleaned  # stable: redacting twice changes nothing


@pytest.mark.parametrize(
    "text",
    ["the token economy is booming", "my password is long", "sk-8 ski boots", "a secret plan"],
)
def test_ordinary_words_are_left_alone(text: str) -> None:
    assert redact_secrets(text) == text


async def test_a_model_summary_and_card_holding_a_key_are_stored_redacted(tmp_path: Path) -> None:
    summary = {
        "title": f"Key {KEY}",
        "tags": [KEY],
        "summary": f"The user shared {KEY} for staging.",
        "keypoints": [f"staging key {KEY}"],
        "should_extract": True,
    }
    model = ScriptedModel.of([summary])
    config = MemoryConfig(block_turn_size=1)
    async with await StrataGate.open(tmp_path / "m.db", config, model) as memory:
        receipt = await memory.blocks.append_turn(
            "ns", "t", user=f"the key is {KEY}", assistant="ok"
        )
        card = {
            "title": f"Staging key {KEY}",
            "summary": f"Key {KEY}.",
            "tags": ["staging"],
            "quotes": [f"the key is {KEY}"],
            "source_message_ids": [receipt.message_ids[0]],
            "scope": "user",
        }
        model.push({"should_extract": True, "events": [card]})
        await memory.derivation.process_pending()
        [view] = await memory.blocks.views()
        [event] = await memory.events.cards()
        messages = await memory.blocks.messages(view.block.id)
    block = view.block
    derived = [block.l0_title, *block.l0_tags, block.l1_summary, *block.l2_keypoints]
    derived += [event.title, event.summary, *event.quotes]
    assert all(KEY not in str(text) for text in derived), derived
    assert REDACTED in block.l1_summary and REDACTED in event.summary
    assert messages[0].content == f"the key is {KEY}"  # the evidence stays verbatim
