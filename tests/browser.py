"""The browser-test harness: the real ``stratagate serve`` and Debian's headless Chromium.

tests/conftest.py loads this module as a plugin, so any test can ask for:

- ``app``: one ``stratagate serve --port 0`` subprocess per module, on its own
  ``$STRATAGATE_HOME`` and cwd (an ``App``: ``url``, ``home``, ``session_file(id)``);
- ``page``: a Playwright page per test in a fresh browser context (no cookies carried
  over) at 1280 px wide, with relative URLs resolved against the app, e.g. ``page.goto("/")``;
- ``screenshot(page, "name")`` saves ``assets/screenshots/name.png`` (the whole page;
  ``$SCREENSHOTS_DIR`` names another folder, as ``make shots-check`` does).

The ``app`` server runs with a fixed clock and fixed ids (``tests/fixed_world.py``) and
every page's ``Math.random`` is seeded, so a run that changes nothing renders the same
pages and writes the same PNG bytes; a screenshot of a server without them fails.

One browser per module keeps the run short. Every page is watched: a script error or a
Content-Security-Policy violation on any page fails the test that showed it. Without
``/usr/bin/chromium`` the tests fail (``apt-get install chromium``), they are not skipped.
``serve(root, *args)`` and ``start(root, *args)`` run the command for tests of ``serve`` itself.
"""

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from weakref import WeakKeyDictionary

import httpx
import pytest
from fixed_world import FIXED_LINE
from playwright.sync_api import Browser, ConsoleMessage, Locator, Page, expect, sync_playwright

REPO = Path(__file__).resolve().parents[1]
SCREENSHOTS = REPO / "assets" / "screenshots"
SHOTS_DIR_VARIABLE = "SCREENSHOTS_DIR"
FIXED_WORLD = Path(__file__).resolve().with_name("fixed_world.py")
CHROMIUM = Path("/usr/bin/chromium")
# Without the background-networking flags Chromium dials out, and a closed network refuses it.
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    # One raster thread, whole tiles: the same pixels every run (rounded corners were
    # once antialiased one shade apart between two runs).
    "--num-raster-threads=1",
    "--disable-partial-raster",
]
VIEWPORT = {"width": 1280, "height": 800}
TIMEOUT_S = 15.0
URL_PREFIX = "StrataGate is serving on "
expect.set_options(timeout=TIMEOUT_S * 1000)  # a loaded CI machine is slow to answer
_PAGE_PROBLEMS: "WeakKeyDictionary[Page, list[str]]" = WeakKeyDictionary()
_APPS: "dict[str, App]" = {}  # every started server by its URL: whose page a screenshot shows


@dataclass
class App:
    """A running ``stratagate serve``: its URL (no trailing slash, no token) and files."""

    process: subprocess.Popen[bytes]
    url: str
    home: Path
    cwd: Path
    printed: str = ""
    logs: Path = field(default_factory=Path)
    fixed: bool = False
    """It said it runs with the fixed clock and ids (``FIXED_LINE``)."""

    def session_file(self, session_id: str) -> Path:
        return self.home / "sessions" / f"{session_id}.jsonl"

    def stderr(self) -> str:
        return (self.logs / "stderr.txt").read_text(errors="replace")


def server_env(home: Path) -> dict[str, str]:
    """The user's environment minus StrataGate settings and proxies, and this checkout's code."""
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith("STRATAGATE_") and "proxy" not in name.lower()
    }
    env["STRATAGATE_HOME"] = str(home)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    env["PYTHONUNBUFFERED"] = "1"
    return env


def run(
    root: Path, *args: str, timeout: float = 30.0, fixed: bool = False
) -> subprocess.CompletedProcess[str]:
    """``stratagate <args>`` to the end, in ``root`` (its home ``root/home``; ``fixed``:
    with the fixed clock and ids)."""
    root.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, *_launcher(fixed), *args]
    return subprocess.run(
        command,
        cwd=root,
        env=server_env(root / "home"),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def start(root: Path, *args: str, fixed: bool = False) -> App:
    """``stratagate serve <args>`` in the background (``fixed``: with a fixed clock and
    ids); returns once it prints its URL and answers. Output goes to files under ``root``
    (an unread pipe could fill and block it)."""
    home, cwd, logs = root / "home", root / "cwd", root / "logs"
    for folder in (cwd, logs):
        folder.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, *_launcher(fixed), "serve", *args, *_one_process(fixed)]
    with (logs / "stdout.txt").open("wb") as out, (logs / "stderr.txt").open("wb") as err:
        process = subprocess.Popen(command, cwd=cwd, env=server_env(home), stdout=out, stderr=err)
    app = App(process, "", home, cwd, logs=logs)
    try:
        app.printed = _printed_url(app)
        app.url = app.printed.split("?", 1)[0].rstrip("/")
        app.fixed = FIXED_LINE in (logs / "stdout.txt").read_text(errors="replace")
        _wait_until_answering(app)
    except BaseException:
        stop(app)
        raise
    _APPS[app.url] = app
    return app


def _one_process(fixed: bool) -> list[str]:
    """A fixed world is one process: its ids come from one seed per command, so a second
    process of ``serve`` (a web process, the worker's) would repeat the first one's."""
    return ["--processes", "1", "--worker", "inline"] if fixed else []


def _launcher(fixed: bool) -> list[str]:
    return [str(FIXED_WORLD)] if fixed else ["-m", "stratagate_plugin.cli.main"]


def stop(app: App) -> int:
    """Ctrl-C, as a user stops it; killed if it has not exited within 10 s. The exit code."""
    _APPS.pop(app.url, None)
    if app.process.poll() is None:
        app.process.send_signal(signal.SIGINT)
        try:
            app.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            app.process.kill()
            app.process.wait()
    return app.process.returncode


@contextmanager
def serve(root: Path, *args: str) -> Iterator[App]:
    app = start(root, *args)
    try:
        yield app
    finally:
        stop(app)


def _printed_url(app: App) -> str:
    deadline = time.monotonic() + TIMEOUT_S
    stdout = app.logs / "stdout.txt"
    while time.monotonic() < deadline:
        for line in stdout.read_text(errors="replace").splitlines():
            if line.startswith(URL_PREFIX):
                return line.removeprefix(URL_PREFIX).strip()
        if app.process.poll() is not None:
            break
        time.sleep(0.05)
    pytest.fail(
        f"stratagate serve printed no URL (exit {app.process.poll()}):\n"
        f"stdout: {stdout.read_text(errors='replace')}\nstderr: {app.stderr()}"
    )


def _wait_until_answering(app: App) -> None:
    deadline = time.monotonic() + TIMEOUT_S
    with httpx.Client(trust_env=False, timeout=2.0) as client:
        while time.monotonic() < deadline:
            with suppress(httpx.TransportError):
                client.get(app.url + "/static/stratagate.css")
                return
            time.sleep(0.05)
    pytest.fail(f"stratagate serve did not answer at {app.url}:\n{app.stderr()}")


def http_client(app: App, **kwargs: Any) -> httpx.Client:
    """A plain HTTP client to the app (no proxies), for checks a browser cannot make."""
    return httpx.Client(base_url=app.url, trust_env=False, timeout=TIMEOUT_S, **kwargs)


# What still differs between two runs that change nothing, once clock and ids are fixed:
# where the test's server lives (its temporary folder) and which process works a job (host
# name and pid). Each is written over with a placeholder of one length in a span of its
# own, which is masked: the same box every run, the words around it still readable. A
# template may mark more with data-screenshot-mask.
MASKED = "[data-screenshot-mask], [data-screenshot-environment]"
HOST_AND_PID = re.escape(socket.gethostname()) + r":\d+(?::[0-9a-f]+)?"
PLACEHOLDERS = r"""([folders, hostAndPid]) => {
  const escape = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const varying = new RegExp([...folders.map(escape), hostAndPid].join("|"), "g");
  const placeholder = (found) =>
    found.startsWith("/") ? "/tmp/test-folder" : "host:pid";
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const nodes = [];
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    varying.lastIndex = 0;
    if (varying.test(node.nodeValue)) nodes.push(node);
  }
  for (const node of nodes) {
    const parts = document.createDocumentFragment();
    let last = 0;
    for (const found of node.nodeValue.matchAll(varying)) {
      parts.append(node.nodeValue.slice(last, found.index));
      const box = document.createElement("span");
      box.setAttribute("data-screenshot-environment", "");
      box.textContent = placeholder(found[0]);
      parts.append(box);
      last = found.index + found[0].length;
    }
    parts.append(node.nodeValue.slice(last));
    node.replaceWith(parts);
  }
  for (const field of document.querySelectorAll("input, textarea")) {
    varying.lastIndex = 0;
    if (!varying.test(field.value)) continue;
    field.value = field.value.replace(varying, placeholder);
    field.setAttribute("data-screenshot-environment", "");
  }
}"""


def screenshots_dir() -> Path:
    """``assets/screenshots`` (the README shows them), or ``$SCREENSHOTS_DIR``."""
    return Path(os.environ.get(SHOTS_DIR_VARIABLE) or SCREENSHOTS)


def screenshot(page: Page, name: str, *, mask: list[Locator] | None = None) -> Path:
    """The whole page as ``<screenshots_dir()>/<name>.png``. The server must run with the
    fixed clock and ids; what depends on the machine (``MASKED``, and ``mask``) is painted
    over, animations stopped and the caret hidden, so a run that changes nothing rewrites
    the same bytes."""
    app = _app_of(page)
    if not app.fixed:
        pytest.fail(
            f"screenshot {name!r} of a server without the fixed clock and ids: its times "
            "and ids change every run (start it with start(..., fixed=True), as `app` does)",
            pytrace=False,
        )
    if page.locator("html").get_attribute("lang") == "zh-CN":
        _need_a_chinese_font()
    page.evaluate(PLACEHOLDERS, [_folders_of(app), HOST_AND_PID])
    folder = screenshots_dir()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.png"
    page.screenshot(
        path=str(path),
        full_page=True,
        mask=[page.locator(MASKED), *(mask or [])],
        mask_color="#d4d4d4",
        animations="disabled",
        caret="hide",
    )
    return path


def _app_of(page: Page) -> App:
    """The started server whose page this is (a screenshot of anything else fails)."""
    origin = "/".join(page.url.split("/", 3)[:3])
    app = _APPS.get(origin)
    if app is None:
        pytest.fail(f"{page.url} is not a page of a server started here", pytrace=False)
    return app


def _folders_of(app: App) -> list[str]:
    """The server's temporary folder as pages may spell it (resolved or not), longest first."""
    root = app.home.parent
    return sorted({str(root), str(root.resolve())}, key=len, reverse=True)


def send(page: Page, text: str) -> None:
    """On a conversation page: type ``text``, press Send, wait for the agent's answer."""
    turns = page.locator("#turns article.turn")
    before = turns.count()
    page.get_by_role("textbox").fill(text)
    page.get_by_role("button", name="Send").click()
    expect(turns).to_have_count(before + 1)
    expect(turns.last.locator(".message.agent .text")).not_to_be_empty()


def _need_a_chinese_font() -> None:
    """Without one Chromium draws boxes for every Chinese character, and the picture lies."""
    if shutil.which("fc-list") is None:
        return
    fonts = subprocess.run(
        ["fc-list", ":lang=zh", "family"], capture_output=True, text=True, check=False
    )
    if not fonts.stdout.strip():
        pytest.fail(
            "a Chinese screenshot needs a CJK font: `apt-get install fonts-wqy-microhei`",
            pytrace=False,
        )


def page_problems(page: Page) -> list[str]:
    """Script errors and CSP violations the page has shown so far (checked after each test)."""
    return _PAGE_PROBLEMS.setdefault(page, [])


def _watch(page: Page) -> None:
    problems = page_problems(page)

    def console(message: ConsoleMessage) -> None:
        if "Content Security Policy" in message.text:
            problems.append(f"CSP violation on {page.url}: {message.text}")

    page.on("console", console)
    page.on("pageerror", lambda error: problems.append(f"script error on {page.url}: {error}"))


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[App]:
    """One server per test module, with the fixed clock and ids; a traceback in its log
    fails the module's last test."""
    app = start(tmp_path_factory.mktemp("served"), "--port", "0", fixed=True)
    yield app
    code = stop(app)
    assert code == 0, f"stratagate serve exited {code} on Ctrl-C:\n{app.stderr()}"
    assert "Traceback" not in app.stderr(), app.stderr()


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    if not CHROMIUM.exists():
        pytest.fail(
            f"browser tests need Chromium at {CHROMIUM}: `apt-get install chromium` "
            "(`make test` installs it)",
            pytrace=False,
        )
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


# Math.random seeded on every page load: the graph's layout (Cytoscape's "cose" starts
# from random positions) draws the same picture every run.
SEEDED_RANDOM = """(() => {
  let state = 0x2b7e1516;
  Math.random = () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
})();"""


@pytest.fixture
def page(browser: Browser, app: App) -> Iterator[Page]:
    context = browser.new_context(base_url=app.url, viewport=VIEWPORT)
    context.add_init_script(SEEDED_RANDOM)
    context.set_default_timeout(TIMEOUT_S * 1000)
    page = context.new_page()
    _watch(page)
    yield page
    problems = page_problems(page)
    context.close()
    assert not problems, "\n".join(problems)
