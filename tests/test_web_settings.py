"""The settings page: saved to the profile, applied to the running plugin, keys never shown."""

import html
from pathlib import Path

import pytest
import yaml
from overview_data import quiet
from webapp import memory_of, post, web_app

from stratagate_plugin.core.llm.endpoint import HttpModelConfig
from stratagate_plugin.harness.profiles import profile_path
from stratagate_plugin.web.memory.settings_page import endpoint

KEY = "sk-proj-abcdefghijklmnopqrstuvwx"
FORM = {
    "block_turn_size": "2",
    "block_decay_lambda": "0.55",
    "agent_memory_weight": "2.5",
    "show_status_rows": "false",
    "show_citations": "true",
}


def saved_section() -> dict[str, object]:
    data = yaml.safe_load(profile_path("default").read_text(encoding="utf-8"))
    section: dict[str, object] = data.get("settings", {}).get("stratagate-memory", {})
    return section


async def test_the_page_shows_the_running_values(tmp_path: Path) -> None:
    async with web_app(tmp_path) as (_, host, client):
        page = await client.get("/memory/settings")
        assert page.status_code == 200
        assert 'name="block_turn_size" value="6"' in page.text
        assert 'name="block_decay_lambda" value="0.3"' in page.text
        assert 'name="show_citations" value="true" checked' in page.text
        assert "the embedded offline model" in page.text
        assert html.escape(memory_of(host).overview.database_shown) in page.text  # file or URL
        assert "one space per project directory" in page.text


async def test_saving_persists_to_the_profile_and_applies_at_once(tmp_path: Path) -> None:
    async with web_app(tmp_path) as (_, host, client):
        runtime = await quiet(host)
        memory = memory_of(host)
        space = runtime.default_space()
        answer = await post(client, "/memory/settings", data=FORM)
        assert answer.status_code == 303 and "saved=1" in answer.headers["location"]
        assert saved_section() == {
            "block_turn_size": 2,
            "block_decay_lambda": 0.55,
            "agent_memory_weight": 2.5,
            "show_status_rows": False,
            "show_citations": True,
        }
        assert (
            runtime.settings["block_turn_size"] == 2
            and runtime.settings["show_status_rows"] is False
        )
        assert memory.config.block_turn_size == 2 and memory.config.agent_memory_weight == 2.5
        assert memory.config.block_decay_lambda == 0.55
        first = await memory.blocks.append_turn(space, "fresh", user="One.", assistant="a")
        second = await memory.blocks.append_turn(space, "fresh", user="Two.", assistant="b")
        assert first.sealed_block_id is None and second.sealed_block_id is not None
        assert len(await memory.blocks.messages(second.sealed_block_id)) == 4  # two turns
        page = await client.get(answer.headers["location"])
        assert "Saved." in page.text and 'name="block_turn_size" value="2"' in page.text
        assert 'name="show_status_rows" value="true">' in page.text  # unchecked now


async def test_every_space_gets_the_new_block_size(tmp_path: Path) -> None:
    async with web_app(tmp_path) as (_, host, client):
        memory = memory_of(host)
        await memory.blocks.append_turn("other-space", "t", user="One.", assistant="a")
        await post(client, "/memory/settings", data={**FORM, "block_turn_size": "2"})
        receipt = await memory.blocks.append_turn("other-space", "t", user="Two.", assistant="b")
        assert receipt.sealed_block_id is not None  # the older space seals at 2 turns now


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("block_turn_size", "0"),
        ("block_turn_size", "many"),
        ("block_decay_lambda", "-1"),
        ("agent_memory_weight", "7"),
        ("show_citations", "perhaps"),
    ],
)
async def test_a_bad_value_is_400_naming_the_field_and_nothing_is_saved(
    tmp_path: Path, field: str, value: str
) -> None:
    async with web_app(tmp_path) as (_, host, client):
        runtime = await quiet(host)
        answer = await post(client, "/memory/settings", data={**FORM, field: value})
        assert answer.status_code == 400
        assert f"{field}:" in answer.text and "Nothing was saved" in answer.text
        assert saved_section() == {}
        assert runtime.settings["block_turn_size"] == 6
        assert memory_of(host).config.block_turn_size == 6


async def test_a_model_key_never_appears(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_MODEL_KEY", KEY)
    async with web_app(tmp_path) as (_, host, client):
        runtime = await quiet(host)
        host.profile.model = HttpModelConfig(
            base_url="https://api.example.com/v1", model="chat-1", api_key_env="MY_MODEL_KEY"
        )
        runtime.settings["model"] = {
            "base_url": "https://derive.example.com/v1",
            "model": "derive-1",
            "api_key": KEY,
        }
        page = await client.get("/memory/settings")
        assert page.status_code == 200
        assert "https://api.example.com/v1" in page.text and "derive-1" in page.text
        assert "set in MY_MODEL_KEY (hidden)" in page.text and "set (hidden)" in page.text
        assert KEY not in page.text and "sk-" not in page.text
        shown = endpoint(runtime.settings["model"])  # the view itself never holds the key
        assert shown is not None and KEY not in str(shown)


async def test_an_unset_key_variable_is_said(tmp_path: Path) -> None:
    async with web_app(tmp_path) as (_, host, client):
        await quiet(host)
        host.profile.model = HttpModelConfig(
            base_url="https://api.example.com/v1", model="chat-1", api_key_env="NO_SUCH_KEY"
        )
        page = await client.get("/memory/settings")
        assert "NO_SUCH_KEY is not set" in page.text


async def test_the_chinese_settings_page(tmp_path: Path) -> None:
    async with web_app(tmp_path) as (_, host, client):
        await quiet(host)
        page = await client.get("/memory/settings?lang=zh")
        assert "记忆设置" in page.text and "每个短期记忆块的轮数" in page.text
        assert "内置离线模型" in page.text
        bad = await post(client, "/memory/settings?lang=zh", data={**FORM, "block_turn_size": "x"})
        assert bad.status_code == 400 and "没有保存任何内容" in bad.text
