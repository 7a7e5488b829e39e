"""The settings page's model profile (issue 31): the derivation endpoint (never its key),
the structured-output mode found for it, its last error, and "Test the endpoint", which
runs one small structured task against a loopback model and says how long and whether the
answer was valid."""

import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from overview_data import quiet
from test_structured_modes import Mimic, serve
from webapp import post, web_app

from stratagate_plugin.core.llm.endpoint_cache import load_endpoint, record_endpoint
from stratagate_plugin.core.llm.select import endpoint_cache_path
from stratagate_plugin.harness.runtime import Host

KEY = "sk-proj-profile-DO-NOT-LEAK-0123456789"
CHECKED = {"count": 4, "longest": "porcelain"}
TEST_URL = "/memory/settings/test-model"


@pytest.fixture
async def page(tmp_path: Path) -> AsyncIterator[tuple[Host, httpx.AsyncClient]]:
    async with web_app(tmp_path) as (_, host, client):
        await quiet(host)
        yield host, client


def use_endpoint(host: Host, base_url: str, **extra: Any) -> None:
    runtime = host.pm.get_plugin("stratagate-memory").runtime
    runtime.settings["model"] = {"base_url": base_url, "model": "smollm2", **extra}


async def after_the_test(
    page: tuple[Host, httpx.AsyncClient], mimic: Mimic, monkeypatch: pytest.MonkeyPatch, **how: Any
) -> httpx.Response:
    """The page after "Test the endpoint" with ``mimic`` as the derivation model;
    ``remembered``: a mode the cache holds first; ``lang``: the page's language."""
    host, client = page
    async with serve(mimic, monkeypatch):
        use_endpoint(host, mimic.base_url)
        if "remembered" in how:
            record_endpoint(cache(), mimic.base_url, "smollm2", mode=how["remembered"])
        if "lang" in how:
            shown = await client.get(f"/memory/settings?lang={how['lang']}")
            assert "测试接口" in shown.text and "尚未检测" in shown.text
        query = f"?lang={how['lang']}" if "lang" in how else ""
        return await post(client, TEST_URL + query)


def cache() -> Path:
    return endpoint_cache_path(os.environ)


async def test_the_page_shows_the_endpoint_its_mode_and_last_error_never_the_key(
    page: tuple[Host, httpx.AsyncClient], monkeypatch: pytest.MonkeyPatch
) -> None:
    host, client = page
    monkeypatch.setenv("PROFILE_TEST_KEY", KEY)
    use_endpoint(host, "http://127.0.0.1:8099/v1", api_key_env="PROFILE_TEST_KEY")
    shown = await client.get("/memory/settings")
    assert "http://127.0.0.1:8099/v1" in shown.text and "smollm2" in shown.text
    assert "not found yet: the first call finds it" in shown.text
    assert '<dd class="model-error">none</dd>' in shown.text
    assert "Test the endpoint" in shown.text
    record_endpoint(cache(), "http://127.0.0.1:8099/v1/", "smollm2", mode=("tools", False))
    record_endpoint(cache(), "http://127.0.0.1:8099/v1", "smollm2", error=f"HTTP 500 for {KEY}")
    shown = await client.get("/memory/settings")
    assert "a forced tool call — found <time" in shown.text
    assert "HTTP 500 for" in shown.text and KEY not in shown.text


async def test_testing_the_endpoint_runs_one_task_and_says_time_and_validity(
    page: tuple[Host, httpx.AsyncClient], monkeypatch: pytest.MonkeyPatch
) -> None:
    mimic = Mimic(result=CHECKED)
    answer = await after_the_test(page, mimic, monkeypatch)
    assert answer.status_code == 200
    assert "Valid answer in" in answer.text
    assert "asked as response_format json_schema, strict" in answer.text
    assert "valid but wrong" not in answer.text
    [request] = mimic.requests
    assert request["response_format"]["json_schema"]["name"] == "stratagate_check_endpoint"
    assert request["max_tokens"] == 256  # a two-field schema needs little
    state = load_endpoint(cache(), mimic.base_url, "smollm2")
    assert state.mode == "json_schema" and state.last_error is None


async def test_the_test_finds_the_mode_again_and_reports_a_wrong_answer(
    page: tuple[Host, httpx.AsyncClient], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A mode remembered as the prompt's is probed again from the top."""
    mimic = Mimic(response_format="refused", tools="honoured", result={"count": 3, "longest": "x"})
    answer = await after_the_test(page, mimic, monkeypatch, remembered=("prompt", False))
    assert [("response_format" in r, "tools" in r) for r in mimic.requests] == [
        (True, False),
        (False, True),
    ]
    assert "asked as a forced tool call" in answer.text and "valid but wrong" in answer.text
    assert load_endpoint(cache(), mimic.base_url, "smollm2").mode == "tools"


async def test_a_failing_endpoint_is_one_line_on_the_page_and_its_last_error(
    page: tuple[Host, httpx.AsyncClient], monkeypatch: pytest.MonkeyPatch
) -> None:
    mimic = Mimic(response_format="ignored", tools="ignored", prompt="ignored")
    answer = await after_the_test(page, mimic, monkeypatch)
    assert answer.status_code == 200
    assert "No valid answer after" in answer.text
    assert "returned invalid output for check_endpoint twice" in answer.text
    shown = await page[1].get("/memory/settings")
    assert "returned invalid output for check_endpoint twice" in shown.text
    assert "the schema in the prompt (not enforced)" in shown.text


async def test_the_test_is_a_guarded_post(page: tuple[Host, httpx.AsyncClient]) -> None:
    host, client = page
    use_endpoint(host, "http://127.0.0.1:9/v1")
    cross_site = {"sec-fetch-site": "cross-site", "origin": "https://evil.example"}
    assert (await client.post(TEST_URL, headers=cross_site)).status_code == 403
    assert (await client.get(TEST_URL)).status_code == 405
    assert not cache().exists()


async def test_the_offline_model_has_nothing_to_test(page: tuple[Host, httpx.AsyncClient]) -> None:
    _, client = page
    shown = await client.get("/memory/settings")
    assert "Test the endpoint" not in shown.text and "Structured output" not in shown.text
    assert (await post(client, TEST_URL)).status_code == 200


async def test_the_chinese_model_profile(
    page: tuple[Host, httpx.AsyncClient], monkeypatch: pytest.MonkeyPatch
) -> None:
    answer = await after_the_test(page, Mimic(result=CHECKED), monkeypatch, lang="zh")
    assert "秒内得到有效回答" in answer.text and "严格模式" in answer.text
