"""The settings page's model profile in Chromium (issue 31): the real ``stratagate serve``
with a profile naming a loopback model that enforces ``response_format``; "Test the
endpoint" is clicked as a person would, and the page says what it found."""

import asyncio
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import uvicorn
import yaml
from browser import App, start, stop
from playwright.sync_api import Page, expect
from test_structured_modes import Mimic

CHECKED = {"count": 4, "longest": "porcelain"}


@pytest.fixture(scope="module")
def model_url() -> Iterator[str]:
    """The mimic model served from a thread of its own (the browser tests are sync)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    base_url = f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
    mimic = Mimic(result=CHECKED)
    server = uvicorn.Server(uvicorn.Config(mimic.app(base_url), log_level="warning"))
    thread = threading.Thread(target=lambda: asyncio.run(server.serve(sockets=[sock])), daemon=True)
    thread.start()
    try:
        for _ in range(1000):
            if server.started:
                break
            threading.Event().wait(0.01)
        assert server.started, "the loopback model did not start"
        yield base_url
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        sock.close()


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory, model_url: str) -> Iterator[App]:
    """``serve`` over a profile whose model is the loopback one (no key: none is needed)."""
    root = tmp_path_factory.mktemp("served")
    profile = root / "home" / "profiles" / "default.yml"
    profile.parent.mkdir(parents=True)
    model = {"base_url": model_url, "model": "smollm2"}
    profile.write_text(yaml.safe_dump({"plugins": ["stratagate-memory"], "model": model}))
    app = start(root, "--port", "0")
    yield app
    assert stop(app) == 0, app.stderr()
    assert "Traceback" not in app.stderr(), app.stderr()


def test_testing_the_endpoint_from_the_settings_page(page: Page, app: App, model_url: str) -> None:
    page.goto("/memory/settings")
    expect(page.locator("main")).to_contain_text(model_url)
    expect(page.locator(".model-mode")).to_contain_text("not found yet")
    page.get_by_role("button", name="Test the endpoint").click()
    expect(page.locator(".model-check")).to_contain_text("Valid answer in")
    expect(page.locator(".model-mode")).to_contain_text("response_format json_schema, strict")
    expect(page.locator(".model-error")).to_have_text("none")
    assert Path(app.home, "cache", "model-endpoints.json").exists()
